#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) in build-fuzz
# and runs each for a bounded time, starting from its seed corpus and regressions.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
#        scripts/fuzz.sh --build-only            (configure and build the targets, run none)
# Exits non-zero if any target crashes, leaks or times out, naming the saved input;
# save it in tests/fuzz/<target>/regressions/ once the bug is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi
seconds=${1:-60}
case $seconds in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET | --build-only]" >&2; exit 2 ;;
esac
dir=build-fuzz
targets=(frame packet engine tuning rio_request cluster_messages topology)

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/setup.sh installs clang and libFuzzer)" >&2
  exit 1
fi
if [ ! -f "$dir/build.ninja" ]; then
  # Every compiled source gets libFuzzer's coverage hooks; the targets link libFuzzer itself.
  # UBSan reports abort, so undefined behaviour counts as a crash.
  CC=clang CXX=clang++ meson setup "$dir" -Dfuzz=true -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all' \
    -Dcpp_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all'
fi
# Only the fuzz targets, not the whole tree.
nice -n 10 ninja -C "$dir" "${targets[@]/#/tests/fuzz/fuzz_}"
[ $build_only = 1 ] && exit 0

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# fuzz_one TARGET: its saved inputs, then SECONDS of fuzzing; prints what it found (all at
# once, so two targets running side by side do not interleave) and fails when it crashed.
fuzz_one() {
  local t=$1 work=$dir/fuzz-work/$1 log dict=() saved
  mkdir -p "$work/corpus" "$work/crashes"
  log=$work/log.txt
  # A target's words (keywords of a text format) help it past the first byte of each.
  [ -f "tests/fuzz/$t/$t.dict" ] && dict=(-dict="tests/fuzz/$t/$t.dict")
  # The saved inputs first, one by one, so a failing one is named by its own path.
  if ! "$dir/tests/fuzz/fuzz_$t" -runs=0 -artifact_prefix="$work/crashes/" \
    "tests/fuzz/$t/corpus"/* "tests/fuzz/$t/regressions"/* >"$work/replay.txt" 2>&1; then
    saved=$(grep -E '^Running: ' "$work/replay.txt" | tail -n 1 | sed 's/^Running: //')
    { tail -n 40 "$work/replay.txt"; echo "=== fuzz $t: FAILED on a saved input: $saved ==="; }
    return 1
  fi
  # New inputs go to the scratch corpus (first folder); the repository's seeds are only read.
  # rss_limit and malloc_limit: a length from the input must not buy unbounded memory.
  if "$dir/tests/fuzz/fuzz_$t" "$work/corpus" "tests/fuzz/$t/corpus" "tests/fuzz/$t/regressions" \
    -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$work/crashes/" \
    "${dict[@]}" >"$log" 2>&1; then
    echo "=== fuzz $t: ${seconds}s ==="
    grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec' "$log" |
      sed "s/^/fuzz $t: /" || true
    return 0
  fi
  tail -n 40 "$log"
  saved=$(grep -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //' || true)
  echo "=== fuzz $t: FAILED; input: ${saved:-none saved} (log: $log) ==="
  return 1
}

# Two targets at a time (one a core); each one's report is printed when it ends.
mkdir -p "$dir/fuzz-work"
declare -A report=() # pid -> its target's report
status=0
reap() {
  local pid rc=0
  wait -n -p pid || rc=$?
  cat "${report[$pid]}"
  unset "report[$pid]"
  [ $rc -eq 0 ] || status=1
}
for t in "${targets[@]}"; do
  [ ${#report[@]} -lt 2 ] || reap
  fuzz_one "$t" >"$dir/fuzz-work/$t.report" 2>&1 &
  report[$!]="$dir/fuzz-work/$t.report"
done
while [ ${#report[@]} -gt 0 ]; do reap; done
if [ $status -ne 0 ]; then
  echo "fuzz.sh: a target failed (see above)"
else
  echo "fuzz.sh: ${#targets[@]} targets ran ${seconds}s each without a failure"
fi
exit $status
