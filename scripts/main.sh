#!/usr/bin/env bash
# The main job on one machine: the distributed sort on 4 local nodes (4 sort
# processes and a monitor). Generates each node's input partition, sorts,
# validates the node-order concatenation of the outputs with sortcheck (order,
# count and the inputs' checksum), and prints the sort's report.
# NODES (default 4) and RECORDS (per node, default 500000 = 50 MB) change the size;
# WORKDIR (default a fresh directory under /var/tmp) holds the files; ALGORITHM (three-phase,
# the default, or river) picks the sort.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${NODES:-4}
records=${RECORDS:-500000}
# Only what this job runs: the three tools and msgrun, which `sortapp run` starts the nodes
# with (and the libraries they link); the tests and benchmarks are left to scripts/test.sh.
echo "== building sortapp, sortgen, sortcheck and msgrun in build/ =="
log=$(mktemp /tmp/viaduct-main-build-XXXXXX)
if ! scripts/build.sh build -- sortapp/sortapp sortapp/sortapp-job sortapp/sortgen \
  sortapp/sortcheck libmsg/tools/msgrun >"$log" 2>&1; then
  tail -n 60 "$log"
  rm -f "$log"
  echo "main job: the build failed (above)" >&2
  exit 1
fi
rm -f "$log"
work=${WORKDIR:-$(mktemp -d /var/tmp/viaduct-sort-XXXXXX)}
mkdir -p "$work"
trap 'rm -f "$work"/in.* "$work"/out.*' EXIT

echo "== generating $nodes x $records records (100-byte records, 10-byte keys) in $work =="
gen=$(build/sortapp/sortgen --json --partitions "$nodes" "$((nodes * records))" "$work/in")
# The whole input's checksum: the first one sortgen prints (the partitions' follow).
want=$(sed -n 's/^{"records": *[0-9]*, *"checksum": *"\([0-9a-f]*\)".*/\1/p' <<<"$gen")
echo "input checksum: $want"

algorithm=${ALGORITHM:-three-phase}
echo "== sortapp run -n $nodes --algorithm $algorithm =="
build/sortapp/sortapp run -n "$nodes" --algorithm "$algorithm" --input "$work/in.{rank}" \
  --output "$work/out.{rank}"

echo "== sortcheck of the outputs in node order =="
outs=()
for ((i = 0; i < nodes; i++)); do outs+=("$work/out.$i"); done
build/sortapp/sortcheck --expect-checksum "$want" --expect-records "$((nodes * records))" "${outs[@]}"
echo "main job: sorted, and the outputs' checksum equals the inputs' ($want)"
