#!/usr/bin/env python3
"""sansim against BookSim2 on the experiments both can express: open-loop uniform traffic
(self-traffic included, as BookSim's uniform pattern has it) on an 8x8 mesh under dimension
order, a 4-ary 3-tree and a 16-port crossbar, and optionally the 1,024-node 4-ary 5-tree and the
4,096-node 4-ary 6-tree (shorter sample periods: BookSim takes minutes on them).

Both run the same network for the same simulated time at the same offered load: 80-byte
packets (BookSim: five 16-byte flits), one virtual channel of 16 flits (sansim: one lane of
256 bytes under credit flow control in 16-byte credits), a one-cycle link and a three-stage
router (sansim: 320 ns cables and 960 ns per router, one cycle being 16 bytes at 50 MB/s),
Bernoulli injection. BookSim runs one warm-up and three sample periods and drains; sansim
then runs for BookSim's "Time taken" in cycles. The routers differ in detail (BookSim is
flit-level with VC and switch allocators; sansim moves whole packets, cut-through), and
BookSim's fat tree picks a random up link per packet where sansim's tables pick one per
destination, so latencies differ by a few cycles; throughput below saturation is the load.

Prints per case: BookSim's wall time and cycles per second; sansim's wall time (process,
and its event loop), events and events per second; the ratio of the wall times; and both
simulators' accepted load and mean packet latency in cycles. A benchmark: it never fails on
speed. Without a BookSim binary it says so and prints sansim's half.

usage: booksim_compare.py [--booksim PATH] [--sansim PATH] [--load F] [--period CYCLES]
                          [--cases mesh,fattree,crossbar[,fattree1024][,fattree4096]] [--runs N] [--json]
(--runs: each simulator runs each case N times and the fastest counts, as other work on the
machine only ever slows a run down)
BookSim2: fetch github.com/booksim/booksim2, then `make -C src` (needs flex, bison, g++);
the binary is src/booksim.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CYCLE_US = 16 / 50.0  # one 16-byte flit at 50 MB/s

# name: (BookSim topology lines, sansim --topology, sample period scale)
CASES = {
    "mesh": (["topology = mesh;", "k = 8;", "n = 2;", "routing_function = dor;"],
             "mesh:8,8", 1.0),
    "fattree": (["topology = fattree;", "k = 4;", "n = 3;", "routing_function = nca;"],
                "fattree:4,3", 1.0),
    "crossbar": (["topology = fly;", "k = 16;", "n = 1;", "routing_function = dest_tag;"],
                 "crossbar:16", 1.0),
    "fattree1024": (["topology = fattree;", "k = 4;", "n = 5;", "routing_function = nca;"],
                    "fattree:4,5", 0.25),
    "fattree4096": (["topology = fattree;", "k = 4;", "n = 6;", "routing_function = nca;"],
                    "fattree:4,6", 0.1),
}

ROUTER = """num_vcs = 1;
vc_buf_size = 16;
wait_for_tail_credit = 0;
vc_allocator = islip;
sw_allocator = islip;
alloc_iters = 1;
credit_delay = 1;
routing_delay = 0;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
input_speedup = 1;
output_speedup = 1;
internal_speedup = 1.0;
traffic = uniform;
packet_size = 5;
injection_process = bernoulli;
sim_type = latency;
warmup_periods = 1;
max_samples = 4;
warmup_thres = -1.0;
stopping_thres = -1.0;
acc_warmup_thres = -1.0;
acc_stopping_thres = -1.0;
latency_thres = 1000000.0;
sim_count = 1;
seed = 1;
"""


def booksim_config(case, load, period):
    lines, _, scale = CASES[case]
    return "\n".join(lines) + "\n" + ROUTER + (
        f"injection_rate = {load / 5:.6f};\n"  # packets per cycle: five flits each
        f"sample_period = {max(100, int(period * scale))};\n")


def overall(text, name):
    m = re.search(r"====== Overall Traffic Statistics ======(.*)", text, re.S)
    m = re.search(re.escape(name) + r"\s*=\s*([0-9.eE+-]+)", m.group(1) if m else "")
    return float(m.group(1)) if m else None


def run_booksim(binary, case, load, period, tmp):
    cfg = os.path.join(tmp, case + ".cfg")
    with open(cfg, "w") as f:
        f.write(booksim_config(case, load, period))
    t0 = time.monotonic()
    r = subprocess.run([binary, cfg], capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = re.search(r"Time taken is (\d+) cycles", r.stdout)
    if not m:
        raise RuntimeError(f"booksim {case}: no 'Time taken' in its output (exit {r.returncode})"
                           f"\n{r.stdout[-800:]}{r.stderr[-400:]}")
    cycles = int(m.group(1))
    return {"wall_s": wall, "cycles": cycles, "cycles_per_s": cycles / wall,
            "accepted": overall(r.stdout, "Accepted flit rate average"),
            "latency_cycles": overall(r.stdout, "Packet latency average"),
            "hops": overall(r.stdout, "Hops average")}


def run_sansim(binary, case, load, cycles):
    args = [binary, "--topology", CASES[case][1], "--workload", "openloop", "--pattern",
            "uniform", "--self", "--load", str(load), "--acks", "none", "--pci-mbps", "0",
            "--link-delay-ns", "320", "--hop-latency-ns", "960", "--flow-control", "credit",
            "--credit-bytes", "16", "--vl-buffer-bytes", "256",
            "--time-limit-us", f"{cycles * CYCLE_US:.3f}", "--json"]
    t0 = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"sansim {case}: exit {r.returncode}: {r.stderr[-400:]}")
    d = json.loads(r.stdout)
    return {"wall_s": wall, "loop_wall_s": d["wall_s"], "events": d["events"],
            "events_per_s": d["events_per_s"], "accepted": d["throughput_fraction"],
            "latency_cycles": d["transfer_latency"]["mean_us"] / CYCLE_US,
            "hops": d["mean_hops"], "args": " ".join(args[1:])}


def fmt(v, spec):
    """v formatted by spec, or a dash as wide as the spec's width."""
    if v is not None:
        return format(v, spec)
    width = re.match(r"\d*", spec).group(0)
    return "-".rjust(int(width) if width else 1)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--booksim", default=os.environ.get("BOOKSIM", "/tmp/booksim2/src/booksim"))
    ap.add_argument("--sansim", default=os.path.join(here, "..", "..", "build", "simulator",
                                                     "sansim"))
    ap.add_argument("--load", type=float, default=0.2, help="offered load, flits/cycle/node")
    ap.add_argument("--period", type=int, default=10000, help="BookSim sample period, cycles")
    ap.add_argument("--cases", default="mesh,fattree,crossbar")
    ap.add_argument("--runs", type=int, default=1, help="best of N runs of each")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cases = a.cases.split(",")
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case '{c}' ({', '.join(CASES)})")
    if not os.access(a.sansim, os.X_OK):
        print(f"booksim_compare: sansim not built at {a.sansim}", file=sys.stderr)
        return 2
    have_booksim = os.path.isfile(a.booksim) and os.access(a.booksim, os.X_OK)
    if not have_booksim:
        print(f"booksim_compare: BookSim2 binary ABSENT at {a.booksim}: no comparison, sansim "
              f"figures only (give --booksim PATH; see --help to build it)", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases:
            row = {"case": c, "load": a.load}
            if have_booksim:
                row["booksim"] = min((run_booksim(a.booksim, c, a.load, a.period, tmp)
                                      for _ in range(a.runs)), key=lambda x: x["wall_s"])
                cycles = row["booksim"]["cycles"]
            else:
                row["booksim"] = None
                cycles = int(a.period * CASES[c][2]) * 4  # what BookSim runs before draining
            row["cycles"] = cycles
            row["sansim"] = min((run_sansim(a.sansim, c, a.load, cycles) for _ in range(a.runs)),
                                key=lambda x: x["wall_s"])
            if row["booksim"]:
                row["wall_ratio"] = row["booksim"]["wall_s"] / row["sansim"]["wall_s"]
            rows.append(row)
    if a.json:
        print(json.dumps({"booksim": a.booksim if have_booksim else None, "rows": rows},
                         indent=2))
        return 0
    print(f"load {a.load} flits/cycle/node, uniform with self-traffic, 80-byte packets "
          f"(5 flits); one cycle = {CYCLE_US * 1000:.0f} ns")
    print(f"{'case':12} {'cycles':>7} | {'BookSim s':>9} {'cycles/s':>9} | {'sansim s':>8} "
          f"{'loop s':>7} {'events':>9} {'Mevents/s':>9} | {'ratio':>6} | accepted (B/s) | "
          f"latency cyc (B/s)")
    for r in rows:
        b, s = r["booksim"] or {}, r["sansim"]
        print(f"{r['case']:12} {r['cycles']:>7} | {fmt(b.get('wall_s'), '9.2f')} "
              f"{fmt(b.get('cycles_per_s'), '9.0f')} | {s['wall_s']:8.2f} {s['loop_wall_s']:7.2f} "
              f"{s['events']:>9} {s['events_per_s'] / 1e6:9.2f} | "
              f"{fmt(r.get('wall_ratio'), '5.1f')}{'x' if 'wall_ratio' in r else ' '} | {fmt(b.get('accepted'), '.3f')} / "
              f"{s['accepted']:.3f} | {fmt(b.get('latency_cycles'), '.1f')} / "
              f"{s['latency_cycles']:.1f}")
    if not have_booksim:
        print("BookSim2 binary absent: the BookSim columns are empty and no ratio is given")
    print("ratio: BookSim's wall time over sansim's (whole processes, setup included)"
          + (f"; best of {a.runs} runs each" if a.runs > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
