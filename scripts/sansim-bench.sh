#!/usr/bin/env bash
# sansim's speed: events per second and wall time for the 1,024-node fat tree under uniform
# all-to-all for 10 ms of simulated time, and for two small runs. Each case runs RUNS times and
# the fastest is reported (other work on the machine only ever slows a run down). A benchmark,
# not a test: it prints figures and never fails on speed.
# usage: scripts/sansim-bench.sh [--build DIR] [--runs N] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
runs=3
json=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sansim-bench: unknown option '$1'" >&2; exit 2 ;;
  esac
done
sansim=$build/simulator/sansim
[ -x "$sansim" ] || { echo "sansim-bench: $sansim not built (scripts/build.sh $build)" >&2; exit 2; }

# name|arguments
cases=(
  "fattree1024-alltoall-10ms|--topology fattree:4,5 --message-bytes 65536 --time-limit-us 10000"
  "fattree64-alltoall-10ms|--topology fattree:4,3 --message-bytes 65536 --time-limit-us 10000"
  "dual64-phase3b|--topology dual:64 --workload phase3b"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a args <<< "${c#*|}"
  for i in $(seq "$runs"); do
    start=$(date +%s.%N)
    "$sansim" "${args[@]}" --json > "$tmp/$name.$i.json"
    end=$(date +%s.%N)
    echo "$start $end" > "$tmp/$name.$i.time"
  done
done

python3 - "$tmp" "$runs" "$json" "${cases[@]}" <<'EOF'
import json, sys
tmp, runs, as_json, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4:]
out = []
for c in cases:
    name, args = c.split("|", 1)
    best = None
    for i in range(1, runs + 1):
        r = json.load(open(f"{tmp}/{name}.{i}.json"))
        start, end = map(float, open(f"{tmp}/{name}.{i}.time").read().split())
        row = {"case": name, "args": args, "events": r["events"],
               "sim_time_us": r["sim_time_us"], "loop_wall_s": r["wall_s"],
               "events_per_s": r["events_per_s"], "process_wall_s": end - start}
        if best is None or row["loop_wall_s"] < best["loop_wall_s"]:
            best = row
    best["runs"] = runs
    out.append(best)
if as_json:
    print(json.dumps(out, indent=2))
else:
    print(f"{'case':28} {'events':>11} {'Mevents/s':>10} {'loop s':>8} {'process s':>10}")
    for r in out:
        print(f"{r['case']:28} {r['events']:>11} {r['events_per_s'] / 1e6:>10.2f} "
              f"{r['loop_wall_s']:>8.2f} {r['process_wall_s']:>10.2f}")
    print(f"(best of {runs} runs by event-loop wall time; process time includes setup)")
EOF
