#!/usr/bin/env python3
"""Predicts a distributed sort's phase 3b from a trace of a real run.

Generates N partitions (default 4 x 64 MiB), runs `sortapp run -n N` on this machine with
VIADUCT_TRACE set (and --network-mb-s, so no network probe precedes phase 3b), keeps the
trace's phase 3b and replays it with sansim:
  local     on the calibrated local model (simulator/bench/local-model.opts, written by
            calibrate.py) on crossbar:RANKS: predicted beside recorded, and beside the phase
            3b time the sort reported
  fattree   the same ranks spread over a 64-node 4-ary 3-tree with the local model's links
  dual      the same ranks spread over the paper's 64-node dual fabric with ServerNet I's
            figures (sansim's defaults)
Phase 3b in the trace: from the first post of a message of at least 64 KiB (the merge's
remote reads are 512 KiB blocks; phases 1, 2 and 3a send only small messages, and the probe
is skipped) to the last completion of one; every operation posted and completed inside that
window is kept, the rest dropped. The 64-node replays keep the job's ranks (the sort's nodes
and its monitor) and place them evenly over the fabric (--replay-map spread): they show the
same job's traffic crossing a larger fabric, not a 64-node sort.

usage: replay_sort.py [-b BUILD] [--nodes N] [--mib-per-node M] [--workdir DIR] [--keep]
                      [--json]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIG = 64 * 1024
RECORD = 100


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"replay_sort: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r.stdout


def read_trace(path):
    """(header lines, records as split fields, end line) of one trace file."""
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) < 4 or not lines[-1].startswith("# end records"):
        sys.exit(f"replay_sort: {path} is not a complete trace")
    return lines[:3], [ln.split(",") for ln in lines[3:-1]], lines[-1]


def extract_phase_3b(src_dir, dst_dir):
    """Writes the phase-3b records of every trace in src_dir to dst_dir; returns the window
    (first post, last completion) in each file's monotonic ns and the records kept."""
    files = sorted(glob.glob(os.path.join(src_dir, "t.*.csv")))
    traces = {p: read_trace(p) for p in files}
    big = [r for _, recs, _ in traces.values() for r in recs if int(r[4]) >= BIG and r[8] == "0"]
    if not big:
        sys.exit("replay_sort: no message of 64 KiB or more in the trace: no phase 3b found")
    start = min(int(r[6]) for r in big)
    end = max(int(r[7]) for r in big)
    kept = 0
    for path, (head, recs, _) in traces.items():
        inside = [r for r in recs if int(r[6]) >= start and int(r[7]) <= end]
        kept += len(inside)
        out = os.path.join(dst_dir, os.path.basename(path))
        with open(out, "w") as f:
            f.write("\n".join(head) + "\n")
            f.writelines(",".join(r) + "\n" for r in inside)
            f.write(f"# end records {len(inside)} dropped 0\n")
    return start, end, kept


def sansim(build, args):
    out = run([f"{build}/simulator/sansim", *args, "--json"])
    return json.loads(out)


def replay(build, trace_dir, topology, opts, spread):
    args = [*opts, "--topology", topology, "--workload", "replay", "--replay", trace_dir]
    if spread:
        args += ["--replay-map", "spread"]
    j = sansim(build, args)
    return {"topology": topology, "complete": j["complete"], **j["replay"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--mib-per-node", type=int, default=64)
    ap.add_argument("--model", default=os.path.join(ROOT, "simulator", "bench", "local-model.opts"))
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.model) as f:
        local = [w for ln in f if not ln.startswith("#") for w in ln.split()]
    work = a.workdir or tempfile.mkdtemp(prefix="viaduct-replay-sort-", dir="/var/tmp")
    os.makedirs(os.path.join(work, "trace"), exist_ok=True)
    os.makedirs(os.path.join(work, "3b"), exist_ok=True)
    try:
        records = a.mib_per_node * (1 << 20) // RECORD
        run([f"{a.build}/sortapp/sortgen", "--partitions", str(a.nodes),
             str(a.nodes * records), os.path.join(work, "in")])
        env = dict(os.environ, VIADUCT_TRACE=os.path.join(work, "trace", "t.%r.csv"))
        report = json.loads(run([f"{a.build}/sortapp/sortapp", "run", "-n", str(a.nodes),
                                 "--input", os.path.join(work, "in.{rank}"),
                                 "--output", os.path.join(work, "out.{rank}"),
                                 "--network-mb-s", "1000", "--json"], env=env))
        start, end, kept = extract_phase_3b(os.path.join(work, "trace"), os.path.join(work, "3b"))
        ranks = len(glob.glob(os.path.join(work, "3b", "t.*.csv")))
        trace3b = os.path.join(work, "3b")
        rows = [replay(a.build, trace3b, f"crossbar:{ranks}", local, False),
                replay(a.build, trace3b, "fattree:4,3", local, True),
                replay(a.build, trace3b, "dual:64", [], True)]
        result = {"nodes": a.nodes, "mib_per_node": a.mib_per_node, "ranks": ranks,
                  "sort_seconds": report["seconds"],
                  "reported_phase_3b_seconds": report["phase_3b_seconds"],
                  "trace_window_seconds": (end - start) / 1e9, "records_kept": kept,
                  "replays": rows}
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"sort: {a.nodes} nodes x {a.mib_per_node} MiB, {ranks} ranks traced; sort "
          f"{result['sort_seconds']:.3f} s, phase 3b reported {result['reported_phase_3b_seconds']:.3f} s, "
          f"phase 3b window in the trace {result['trace_window_seconds']:.3f} s ({kept} operations)")
    print(f"{'fabric':14} {'messages':>9} {'MB':>9} {'recorded s':>11} {'predicted s':>12} {'ratio':>6}")
    for r in rows:
        print(f"{r['topology']:14} {r['messages']:9} {r['bytes'] / 1e6:9.1f} "
              f"{r['recorded_us'] / 1e6:11.3f} {r['predicted_us'] / 1e6:12.3f} {r['ratio']:6.2f}"
              + ("" if r["complete"] else "  (incomplete)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
