#!/usr/bin/env bash
# The distributed sort's speed figures on this machine, in one run: 4 local
# nodes (default 1 GiB of 100-byte records each) over shm, unrestricted and
# restricted mode, page cache dropped before each sort (when root). Prints per
# mode the total against the sum of the phases' expectations, phase 3a's time,
# and phase 3b's receive rate per node against libmsg's all-to-all at 512 KiB
# (measured here, same mode), with the ratios.
# usage: scripts/sort-cluster-bench.sh [--nodes N] [--mib-per-node M] [--dir D] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=4
mib=1024
dir=/var/tmp/viaduct-sort-bench
json=0
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --mib-per-node) mib=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "sort-cluster-bench: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
scripts/build.sh build >/dev/null
mkdir -p "$dir"
trap 'rm -f "$dir"/in.* "$dir"/out.* "$dir"/.sortapp-*' EXIT
records=$((mib * 1048576 / 100))
build/sortapp/sortgen --partitions "$nodes" $((records * nodes)) "$dir/in" >/dev/null

drop_caches() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches; fi
}

results=()
for mode in unrestricted restricted; do
  flag=--$mode
  a2a=$(VIADUCT_RESTRICTED=$([ $mode = restricted ] && echo 1 || echo 0) \
    build/libmsg/tools/msgrun -n "$nodes" build/libmsg/bench/msg-alltoall --bytes 512K --json)
  drop_caches
  rm -f "$dir"/out.*
  report=$(build/sortapp/sortapp run -n "$nodes" --input "$dir/in.{rank}" \
    --output "$dir/out.{rank}" $flag --json | tail -1)
  outs=()
  for ((i = 0; i < nodes; i++)); do outs+=("$dir/out.$i"); done
  build/sortapp/sortcheck --expect-records $((records * nodes)) "${outs[@]}" >/dev/null ||
    { echo "sort-cluster-bench: the $mode sort's output did not validate" >&2; exit 1; }
  results+=("$(python3 - "$mode" "$report" "$a2a" <<'EOF'
import json, sys
mode, rep, a2a = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
# Sum over phases of the slowest node's expectation (phases run in lockstep across nodes).
phases = {}
for n in rep["per_node"]:
    for p in n["phases"]:
        phases.setdefault(p["phase"], []).append(p)
expected = sum(max(p["expected_seconds"] for p in ps) for ps in phases.values())
recv = [p["bytes_received"] / p["seconds"] / 1e6
        for p in phases.get("phase 3b", []) if p["seconds"] > 0]
recv_rate = sorted(recv)[len(recv) // 2] if recv else 0
# msg-alltoall's per-rank figure counts both directions; phase 3b's is what a node receives.
a2a_recv = a2a["per_rank_bidir_mbps"] / 2
print(json.dumps({"mode": mode, "seconds": rep["seconds"], "expected_sum": expected,
                  "total_over_expected": rep["seconds"] / expected if expected else None,
                  "phase_3a_seconds": rep["phase_3a"]["seconds"],
                  "phase_3a_rounds": rep["phase_3a"]["rounds"],
                  "phase_3b_recv_mb_s": recv_rate, "msg_alltoall_recv_mb_s": a2a_recv,
                  "phase_3b_over_alltoall": recv_rate / a2a_recv if a2a_recv else None,
                  "phase_3b_seconds": rep["phase_3b_seconds"]}))
EOF
)")
done

if [ $json = 1 ]; then
  printf '{"nodes": %d, "mib_per_node": %d, "runs": [%s]}\n' "$nodes" "$mib" \
    "$(IFS=,; echo "${results[*]}")"
  exit 0
fi
echo "# sort-cluster-bench: $nodes nodes x $mib MiB, shm; MB = 10^6 B"
printf '%-13s %9s %12s %8s %10s %7s %14s %14s %8s\n' mode seconds "sum expected" ratio \
  "3a secs" rounds "3b recv MB/s" "a2a recv MB/s" ratio
for r in "${results[@]}"; do
  python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("%-13s %9.2f %12.2f %8.2f %10.3f %7d %14.1f %14.1f %8.2f" % (r["mode"], r["seconds"],
      r["expected_sum"], r["total_over_expected"] or 0, r["phase_3a_seconds"],
      r["phase_3a_rounds"], r["phase_3b_recv_mb_s"], r["msg_alltoall_recv_mb_s"],
      r["phase_3b_over_alltoall"] or 0))' "$r"
done
