#!/usr/bin/env bash
# sortapp's benchmark: `sortapp local` against the printed expectation and against stxxl::sort
# (sortapp/bench/stxxl_sort.cpp) on the same records, plus the in-core sort rate against
# std::sort of the same (key prefix, index) pairs. Prints figures; never pass/fail on speed.
#
# usage: scripts/sort-bench.sh [options]
#   --two-pass-gib G    input of the two-pass run (default 4), with --two-pass-memory (2G)
#   --one-pass-gib G    input of the one-pass run (default 2), with --one-pass-memory (4G)
#   --two-pass-memory M --one-pass-memory M   memory budgets (sortapp --memory syntax)
#   --dir DIR           where input, output and scratch go (default /var/tmp/sortapp-bench)
#   --records-incore N  records for the in-core comparison (default 10000000)
#   --format R/K        record and key size (default 100/10; 80/8 also works with STXXL)
#   --no-stxxl          skip the STXXL runs
#   --keep              keep the data files
# Page caches are dropped before every timed run when /proc/sys/vm/drop_caches is writable.
set -euo pipefail
cd "$(dirname "$0")/.."

two_gib=4 one_gib=2 two_mem=2G one_mem=4G dir=/var/tmp/sortapp-bench incore=10000000
format=100/10 stxxl=1 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --two-pass-gib) two_gib=$2; shift ;;
    --one-pass-gib) one_gib=$2; shift ;;
    --two-pass-memory) two_mem=$2; shift ;;
    --one-pass-memory) one_mem=$2; shift ;;
    --dir) dir=$2; shift ;;
    --records-incore) incore=$2; shift ;;
    --format) format=$2; shift ;;
    --no-stxxl) stxxl=0 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "sort-bench: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
rs=${format%/*} ks=${format#*/}
fmt=(--record-size "$rs" --key-size "$ks")

scripts/build.sh build >/dev/null
bin=build/sortapp
if [ "$stxxl" = 1 ] && [ ! -x $bin/stxxl_sort ]; then
  echo "sort-bench: stxxl_sort not built (install libstxxl-dev); running without it" >&2
  stxxl=0
fi
mkdir -p "$dir"
# STXXL writes its logs to the working directory unless told otherwise.
export STXXLLOGFILE=$dir/stxxl.log STXXLERRLOGFILE=$dir/stxxl.errlog
[ "$keep" = 1 ] || trap 'rm -rf "$dir"/input-* "$dir"/output-* "$dir"/stxxl-*' EXIT

drop_caches() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then
    echo 3 > /proc/sys/vm/drop_caches
  else
    echo "  (cannot drop caches: not root; figures include cache effects)"
  fi
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
json_field() { sed -n "s/.*\"$1\": *\([0-9.a-z\"]*\).*/\1/p" | head -1 | tr -d '"'; }

# Measure the scratch disk once, outside the timed runs (sortapp caches the figures).
echo "== scratch disk =="
$bin/sortgen "${fmt[@]}" 1 "$dir/input-probe" >/dev/null
$bin/sortapp local "${fmt[@]}" --remeasure --probe-size 1G --scratch "$dir" --no-progress \
  "$dir/input-probe" "$dir/output-probe" | grep 'scratch disk' | sed 's/^/  /'
rm -f "$dir/input-probe" "$dir/output-probe"

echo "== in-core sort: $incore records of $format =="
$bin/incore_sort "$incore" uniform

run_case() {
  local name=$1 gib=$2 mem=$3
  local records bytes
  bytes=$(awk -v g="$gib" 'BEGIN { printf "%.0f", g * 1073741824 }')
  records=$((bytes / rs))
  bytes=$((records * rs))
  echo
  echo "== $name: $records records ($(mib $bytes) MiB) of $format, memory budget $mem =="
  local input=$dir/input-$name output=$dir/output-$name
  local gen sum
  gen=$($bin/sortgen "${fmt[@]}" --seed 1 "$records" "$input")
  sum=$(echo "$gen" | sed -n 's/^checksum: //p')
  echo "  sortgen checksum $sum"

  drop_caches
  local t0 t1 report
  t0=$(date +%s.%N)
  report=$($bin/sortapp local "${fmt[@]}" --memory "$mem" --scratch "$dir" --no-progress \
           "$input" "$output")
  t1=$(date +%s.%N)
  echo "$report" | sed 's/^/  /'
  local wall expected
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  expected=$(echo "$report" | sed -n 's/.*total \([0-9.]*\) s$/\1/p; s/^expected: one-pass \([0-9.]*\) s$/\1/p' | tail -1)
  echo "  sortapp wall time (with process start) ${wall} s, expectation ${expected:-?} s," \
       "ratio $(awk -v w="$wall" -v e="${expected:-0}" 'BEGIN { if (e > 0) printf "%.2f", w / e; else print "?" }')," \
       "$(awk -v b="$bytes" -v w="$wall" 'BEGIN { printf "%.0f", b / w / 1e6 }') MB/s"
  $bin/sortcheck "${fmt[@]}" --expect-checksum "$sum" --expect-records "$records" "$output" \
    | sed 's/^/  sortcheck: /'
  rm -f "$output"

  if [ "$stxxl" = 1 ]; then
    cp "$input" "$dir/stxxl-work"   # stxxl::sort works in place: not timed
    drop_caches
    local mem_mib
    mem_mib=$(awk -v m="$mem" 'BEGIN {
      n = m + 0; u = substr(m, length(m));
      if (u == "G") n *= 1024; else if (u == "K") n /= 1024; else if (u != "M") n /= 1048576;
      printf "%d", n }')
    t0=$(date +%s.%N)
    $bin/stxxl_sort "$dir/stxxl-work" "$mem_mib" "$rs" "$ks" "$dir/stxxl-scratch" 2>&1 \
      | grep -v '^\[STXXL\]' | sed 's/^/  /' || true
    t1=$(date +%s.%N)
    local swall
    swall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "  stxxl::sort wall time ${swall} s, $(awk -v b="$bytes" -v w="$swall" 'BEGIN { printf "%.0f", b / w / 1e6 }') MB/s;" \
         "sortapp throughput / stxxl throughput = $(awk -v s="$swall" -v w="$wall" 'BEGIN { printf "%.2f", s / w }')"
    $bin/sortcheck "${fmt[@]}" --expect-checksum "$sum" "$dir/stxxl-work" | sed 's/^/  sortcheck (stxxl): /'
    rm -f "$dir/stxxl-work" "$dir/stxxl-scratch"
  fi
  rm -f "$input"
}

run_case two-pass "$two_gib" "$two_mem"
run_case one-pass "$one_gib" "$one_mem"
