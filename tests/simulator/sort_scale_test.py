#!/usr/bin/env python3
"""simulator/bench/sort_scale.py predicts a sort's network phase: on the 64-node fabrics, a
short run gives a row per fabric whose time is the longer of the disk's and the network's, no
fabric deadlocks, and the full fat tree carries at least what its 2:1 oversubscribed one does.
usage: sort_scale_test.py SORT_SCALE SANSIM"""
import json
import subprocess
import sys

script, sansim = sys.argv[1:3]
r = subprocess.run([sys.executable, script, "--sansim", sansim, "--sizes", "64", "--sim-us",
                    "400", "--warmup-us", "100", "--json"], capture_output=True, text=True,
                   timeout=120)
if r.returncode != 0:
    sys.exit(f"FAIL: sort_scale.py exited {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
rows = {x["fabric"]: x for x in json.loads(r.stdout)}
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


expect(sorted(rows) == ["dragonfly", "fattree", "fattree2"], f"a row per fabric ({sorted(rows)})")
for name, x in rows.items():
    expect(not x["deadlock"], f"{name}: no deadlock")
    expect(0 < x["accepted_mbps"] <= x["offered_mbps"] * 1.05,
           f"{name}: accepts some of what it is offered, not more ({x['accepted_mbps']:.1f} of "
           f"{x['offered_mbps']:.1f} MB/s)")
    expect(x["phase_s"] == max(x["disk_s"], x["network_s"]), f"{name}: the slower bound counts")
    expect(abs(x["per_node_bytes"] * x["nodes"] - 1e12) < 1, f"{name}: a terabyte in all")
    expect(x["command"].startswith("build/simulator/sansim --topology "),
           f"{name}: the command is shown")
expect(rows["fattree"]["accepted_mbps"] >= rows["fattree2"]["accepted_mbps"],
       "the full fat tree carries at least what the oversubscribed one does")
for f in failures:
    print("FAIL:", f)
print(f"{len(rows)} fabrics, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
