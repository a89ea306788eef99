#!/usr/bin/env python3
"""A real sort's message traces replay: sortgen makes two partitions, `sortapp run -n 2` sorts
them with VIADUCT_TRACE set, and `sansim --workload replay --replay DIR` replays the directory,
which holds the inputs, outputs and the sort's report beside the traces, as a user's would.
usage: replay_sort_test.py SANSIM SORTAPP SORTGEN"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sansim, sortapp, sortgen = sys.argv[1:4]
failures = []


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout[-2000:]}"
                 f"\n{r.stderr[-2000:]}")
    return r


def expect(cond, what):
    if not cond:
        failures.append(what)


work = tempfile.mkdtemp(prefix="sansim-replay-sort-")
try:
    run([sortgen, "--partitions", "2", "200000", os.path.join(work, "in")])
    env = dict(os.environ, VIADUCT_TRACE=os.path.join(work, "trace.%r"))
    report = run([sortapp, "run", "-n", "2", "--input", os.path.join(work, "in.{rank}"),
                  "--output", os.path.join(work, "out.{rank}"), "--network-mb-s", "1000"],
                 env=env)
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write(report.stdout)
    traces = sorted(n for n in os.listdir(work) if n.startswith("trace."))
    expect(traces == ["trace.0", "trace.1", "trace.2"], f"one trace per rank: {traces}")
    sends = 0
    for name in traces:
        with open(os.path.join(work, name)) as f:
            for line in f:
                field = line.strip().split(",")
                if len(field) == 9 and field[1] == "send" and field[5] != "self" \
                        and field[8] == "0":
                    sends += 1

    r = run([sansim, "--topology", "crossbar:3", "--workload", "replay", "--replay", work,
             "--json"])
    d = json.loads(r.stdout)
    rep = d["replay"]
    expect(d["complete"] and not d["stalled"], "the replay completes")
    expect(rep["ranks"] == 3, f"3 ranks replayed (two nodes, the monitor): {rep['ranks']}")
    expect(rep["messages"] == sends, f"every message between ranks replayed: {rep['messages']} "
           f"of {sends}")
    expect(rep["unmatched_receives"] == 0, "every receive matches a send")
    expect(rep["bytes"] > 9_900_000, f"phase 3b's 10 MB between the nodes: {rep['bytes']} B")
    expect(0 < rep["recorded_us"] and 0 < rep["predicted_us"], "both times are known")

    # The same directory in text, the way docs/sansim.md shows it.
    r = run([sansim, "--topology", "crossbar:3", "--workload", "replay", "--replay", work])
    expect("replay: 3 ranks," in r.stdout and r.stderr == "", "the text report names the replay")
finally:
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
print("a real sort's traces replayed" if not failures else f"{len(failures)} checks failed")
sys.exit(1 if failures else 0)
