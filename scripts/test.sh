#!/usr/bin/env bash
# Builds and runs the whole test suite three times: a release build, an
# AddressSanitizer build and a ThreadSanitizer build. Exits non-zero if any
# test fails. meson prints the real counts (ok / fail / skipped) of each run.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
run() {
  local name=$1 dir=$2
  shift 2
  echo "=== $name: build ($dir) ==="
  scripts/build.sh "$dir" "$@"
  echo "=== $name: test ==="
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2; then
    status=1
    echo "=== $name: FAILED ==="
  fi
}

run release build
# Sanitizer builds. libfabric itself is not instrumented; none of its reports
# are suppressed. b_lundef=false: the sanitizer runtime resolves at load time.
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
  run address build-asan -Db_sanitize=address -Dbuildtype=debugoptimized -Db_lundef=false
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
  run thread build-tsan -Db_sanitize=thread -Dbuildtype=debugoptimized -Db_lundef=false

if [ $status -ne 0 ]; then
  echo "test.sh: SOME TESTS FAILED"
else
  echo "test.sh: all suites passed (release, address, thread)"
fi
exit $status
