#!/usr/bin/env bash
# First checks that no C/C++ function is longer than 80 lines
# (scripts/function-size-check.py, a second at most) and that every C/C++ file
# is formatted as .clang-format says (scripts/format-check.sh). Then builds and tests
# in three trees: a release build (everything, every test), an AddressSanitizer build
# (every test, and only the programs the tests run: no benchmarks) and a ThreadSanitizer
# build (the tests of suite `threads`, and the programs they run). Then runs the fuzz
# targets for a bounded time (scripts/fuzz.sh), then the Soft-RoCE suite
# (tests/softroce/suite.sh) inside a qemu guest on the release build. Ends with the time
# each stage took to build and to test, and the total.
# Exits non-zero if any test fails. meson prints the real counts (ok / fail /
# skipped) of each run. VIADUCT_SKIP_SOFTROCE=1 skips the Soft-RoCE suite
# (reported as SKIPPED, not as passed).
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
failed_stages=()
times=() # "stage|build seconds|test seconds", printed at the end
if [ "${VIADUCT_SKIP_SOFTROCE:-0}" != 1 ]; then
  # Before the long builds: the Soft-RoCE suite needs qemu and Debian's kernel package.
  scripts/softroce-run --check || {
    echo "test.sh: the Soft-RoCE suite cannot run here (see above); set VIADUCT_SKIP_SOFTROCE=1 to skip it" >&2
    exit 1
  }
fi

print_times() {
  local row name build test
  echo "test.sh: time per stage (seconds)"
  printf '  %-16s %7s %7s\n' stage build test
  for row in "${times[@]}"; do
    IFS='|' read -r name build test <<<"$row"
    printf '  %-16s %7s %7s\n' "$name" "$build" "$test"
  done
  echo "test.sh: $SECONDS s in all ($((SECONDS / 60)) min $((SECONDS % 60)) s)"
}

# The names of the tests that did not pass in a build directory's last meson run.
failed_tests() {
  python3 -c '
import json, sys
bad = [t["name"] for t in map(json.loads, open(sys.argv[1])) if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL")]
print(" ".join(bad) or "(none recorded)")' "$1/meson-logs/testlog.json"
}

# scope_args SCOPE: sets `targets` (for scripts/build.sh) and `suite_args` (for meson test).
# SCOPE: `all` (the whole tree, every test), `tests` (what the tests run, every test) or a
# list of meson suites (what their tests run, those tests only).
scope_args() {
  local s
  targets=()
  suite_args=()
  case $1 in
    all) ;;
    tests) targets=(-- @tests) ;;
    *)
      targets=(--)
      for s in $1; do
        targets+=("@$s")
        suite_args+=(--suite "$s")
      done
      ;;
  esac
}

build_start=0
declare -A build_seconds=()

# build NAME DIR SCOPE [MESON_OPTION...]: builds DIR; on failure prints the times and exits.
build() {
  local name=$1 dir=$2 targets suite_args
  scope_args "$3"
  shift 3
  echo "=== $name: build ($dir) ==="
  build_start=$SECONDS
  if ! scripts/build.sh "$dir" "$@" ${targets[@]+"${targets[@]}"}; then
    times+=("$name|$((SECONDS - build_start))|-")
    echo "=== $name: BUILD FAILED ==="
    print_times
    for s in ${failed_stages[@]+"${failed_stages[@]}"} "$name: build"; do echo "test.sh: FAILED $s"; done
    exit 1
  fi
  build_seconds[$name]=$((SECONDS - build_start))
}

# run_tests NAME DIR SCOPE: runs the tests of DIR (those of SCOPE's suites).
run_tests() {
  local name=$1 dir=$2 scope=$3 targets suite_args t0=$SECONDS
  scope_args "$scope"
  shift 3 # the rest: more meson test arguments (--no-suite S)
  echo "=== $name: test${suite_args[*]:+ (suites $scope)}${*:+ ($*)} ==="
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2 ${suite_args[@]+"${suite_args[@]}"} "$@"; then
    status=1
    failed_stages+=("$name: $(failed_tests "$dir")")
    echo "=== $name: FAILED ==="
  fi
  times+=("$name|${build_seconds[$name]}|$((SECONDS - t0))")
  echo "=== $name: built in ${build_seconds[$name]} s, tests took $((SECONDS - t0)) s ==="
}

# Fast, before any build: no C/C++ function over 80 lines outside the allow-list
# (scripts/function-size-allow.txt).
echo "=== function size: no function over 80 lines ==="
t0=$SECONDS
if ! scripts/function-size-check.py; then
  status=1
  failed_stages+=("function size")
  echo "=== function size: FAILED ==="
fi
times+=("function size|-|$((SECONDS - t0))")

echo "=== format: clang-format ==="
t0=$SECONDS
if ! scripts/format-check.sh; then
  status=1
  failed_stages+=("format")
  echo "=== format: FAILED ==="
fi
times+=("format|-|$((SECONDS - t0))")

# Sanitizer builds. libfabric itself is not instrumented; none of its reports
# are suppressed. b_lundef=false: the sanitizer runtime resolves at load time.
# -Dbenchmarks=false: the benchmarks are built and run in the release tree only. -O1, as the
# sanitizers' documentation advises: fast enough to run, quicker to compile than -O2. -g1: line
# tables and function names, all a sanitizer's report shows (inlined frames included), at
# about three quarters of -g's compile time.
# Unity builds (8 sources of a target compiled as one): the heavy headers (CLI11, nlohmann_json,
# Catch2) are parsed once per 8 files; a cold ASan tree builds in half the time. The release
# tree is built file by file, as users build it, so a missing #include still fails there.
sanitizer_options=(-Doptimization=1 -Ddebug=true -Db_lundef=false -Dbenchmarks=false
  -Dc_args=-g1 -Dcpp_args=-g1 -Dunity=on -Dunity_size=8)
# ThreadSanitizer on the tests of suite `threads`: those whose processes run several threads
# over shared state under load (libmsg's API from many threads, libremoteio's shadow thread, the
# datapump, the sort's node threads). The rest, and the single-threaded computation (sansim,
# the local sort's unit tests), are left to the release and AddressSanitizer trees.
thread_scope=threads

build release build all
run_tests release build all
build address build-asan tests -Db_sanitize=address "${sanitizer_options[@]}"
# The scripts suite (the benchmark drivers' logic and every program's command-line
# conventions) runs in the release tree only: the programs it drives are the ones every other
# suite runs under the sanitizer, and it took about 50 s of this stage. So does suite `timing`
# (the needle finder judging how long each node's phases took, which the sanitizer distorts;
# about 55 s run alone).
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" run_tests address build-asan tests --no-suite scripts \
  --no-suite timing
build thread build-tsan "$thread_scope" -Db_sanitize=thread "${sanitizer_options[@]}"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" run_tests thread build-tsan "$thread_scope"

# libFuzzer: each target for a bounded time from its seed corpus (clang, build-fuzz).
echo "=== fuzz: libFuzzer targets, 15 s each (build-fuzz) ==="
t0=$SECONDS
fuzz_build=-
fuzz_ok=1
if scripts/fuzz.sh --build-only; then
  fuzz_build=$((SECONDS - t0))
  t0=$SECONDS
  scripts/fuzz.sh 15 || fuzz_ok=0
else
  fuzz_ok=0
fi
times+=("fuzz|$fuzz_build|$((SECONDS - t0))")
if [ $fuzz_ok = 0 ]; then
  status=1
  failed_stages+=("fuzz")
  echo "=== fuzz: FAILED ==="
fi

softroce=passed
if [ "${VIADUCT_SKIP_SOFTROCE:-0}" = 1 ]; then
  softroce=SKIPPED
  times+=("softroce|-|skipped")
  echo "=== softroce: SKIPPED (VIADUCT_SKIP_SOFTROCE=1) ==="
else
  echo "=== softroce: libmsg over verbs and verbs;ofi_rxm in a qemu guest (build) ==="
  t0=$SECONDS
  # softroce-run exits 125 at once, saying why, when qemu or the kernel cannot be had.
  if ! scripts/softroce-run --timeout 1200 tests/softroce/suite.sh build; then
    softroce=FAILED
    status=1
    failed_stages+=("softroce")
    echo "=== softroce: FAILED ==="
  fi
  times+=("softroce|-|$((SECONDS - t0))")
fi

print_times
if [ $status -ne 0 ]; then
  for f in "${failed_stages[@]}"; do echo "test.sh: FAILED $f"; done
  echo "test.sh: SOME TESTS FAILED (softroce: $softroce)"
elif [ $softroce = SKIPPED ]; then
  echo "test.sh: function size, format, release, address, thread and fuzz suites passed; softroce SKIPPED"
else
  echo "test.sh: all suites passed (function size, format, release, address, thread, fuzz, softroce)"
fi
exit $status
