#!/usr/bin/env python3
"""A terabyte sort's network phase (phase 3b, the parallel merge) predicted on fabrics of
1,024 to 16,384 nodes: a full fat tree, a 2:1 oversubscribed fat tree and a dragonfly.

Each node holds DATA / N bytes of sorted runs and merges its output partition from the other
nodes' runs by remote reads and writes (sansim's phase3b workload: --request-bytes transfers
to random nodes, half reads, Poisson at a rate). The rate offers what the node's disk can
feed: the merge reads and writes each byte once, so a node moves at most MIXED / 2 MB/s of
merged data, MIXED being the disk's rate with reads and writes overlapping (sortapp probe).
The links, packets, request window and outstanding requests are the calibrated local model
(simulator/bench/local-model.opts, from calibrate.py). sansim runs SIM_US of the phase and
counts what the network accepts after WARMUP_US; the phase then takes the longer of
its disk time (2 * DATA/N / MIXED) and its network time (the bytes that leave the node over
the accepted rate): the rate is steady long before the phase ends, so the time scales with
the data and a shorter simulation only narrows the sample.

Prints a row per fabric and size with the sansim command, the accepted MB/s per node, which
of disk and network bounds the phase, and the predicted seconds.

usage: sort_scale.py [--sansim PATH] [--model FILE] [--sizes 1024,4096,16384]
                     [--fabrics fattree,fattree2,dragonfly] [--data-bytes B] [--mixed-mbps F]
                     [--request-bytes B] [--sim-us T] [--warmup-us T] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Per fabric, nodes -> topology spec (the dragonflies' node counts are the nearest balanced
# ones: 72, 1,056, 4,160 and 16,512) and the options it needs. 64 nodes: a quick check.
FABRICS = {
    "fattree": ({64: "fattree:4,3", 1024: "fattree:4,5", 4096: "fattree:4,6",
                 16384: "fattree:4,7"}, []),
    "fattree2": ({64: "fattree:4,3,2", 1024: "fattree:4,5,2", 4096: "fattree:4,6,2",
                  16384: "fattree:4,7,2"}, []),
    "dragonfly": ({64: "dragonfly:4,2,2", 1024: "dragonfly:8,4,4", 4096: "dragonfly:16,4,4",
                   16384: "dragonfly:16,8,8"},
                  ["--routing", "minimal", "--vls", "2", "--vl-rule", "group"]),
}


def model_options(path):
    with open(path) as f:
        return [w for line in f if not line.startswith("#") for w in line.split()]


def run(a, fabric, size, model):
    specs, extra = FABRICS[fabric]
    mbps = a.mixed_mbps / 2
    rate = mbps * 1e6 / a.request_bytes
    args = [a.sansim, "--topology", specs[size], *extra, "--workload", "phase3b",
            "--request-bytes", str(a.request_bytes), "--read-fraction", "0.5",
            "--rate", f"{rate:.0f}", *model, "--time-limit-us", str(a.sim_us),
            "--warmup", str(a.warmup_us), "--json"]
    t0 = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode not in (0, 3):
        raise RuntimeError(f"sansim {specs[size]}: exit {r.returncode}: {r.stderr[-400:]}")
    d = json.loads(r.stdout)
    n = d["nodes"]
    accepted = d["throughput_fraction"] * d["injection_capacity_mbps"]
    per_node = a.data_bytes / n
    disk_s = 2 * per_node / (a.mixed_mbps * 1e6)
    net_s = per_node * (n - 1) / n / (accepted * 1e6) if accepted > 0 else float("inf")
    return {"fabric": fabric, "topology": specs[size], "nodes": n, "per_node_bytes": per_node,
            "offered_mbps": d["injected_fraction"] * d["injection_capacity_mbps"],
            "accepted_mbps": accepted, "disk_s": disk_s, "network_s": net_s,
            "phase_s": max(disk_s, net_s), "bound": "network" if net_s > disk_s else "disk",
            "mean_hops": d["mean_hops"], "or_exhausted": d["or_exhausted_mean_fraction"],
            "deadlock": d["deadlock"], "events": d["events"], "wall_s": wall,
            "peak_rss_bytes": d["peak_rss_bytes"],
            "command": " ".join(["build/simulator/sansim"] + args[1:])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sansim", default=os.path.join(HERE, "..", "..", "build", "simulator",
                                                     "sansim"))
    ap.add_argument("--model", default=os.path.join(HERE, "local-model.opts"))
    ap.add_argument("--sizes", default="1024,4096,16384")
    ap.add_argument("--fabrics", default="fattree,fattree2,dragonfly")
    ap.add_argument("--data-bytes", type=float, default=1e12)
    ap.add_argument("--mixed-mbps", type=float, default=1789.0,
                    help="disk MB/s with reads and writes overlapping (sortapp probe)")
    ap.add_argument("--request-bytes", type=int, default=65536)
    ap.add_argument("--sim-us", type=float, default=2000)
    ap.add_argument("--warmup-us", type=float, default=500)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    fabrics = a.fabrics.split(",")
    for f in fabrics:
        if f not in FABRICS:
            ap.error(f"unknown fabric '{f}' ({', '.join(FABRICS)})")
    for s in sizes:
        if s not in FABRICS["fattree"][0]:
            ap.error(f"size {s}: one of {', '.join(map(str, FABRICS['fattree'][0]))}")
    if not os.access(a.sansim, os.X_OK):
        print(f"sort_scale: sansim not built at {a.sansim}", file=sys.stderr)
        return 2
    model = model_options(a.model)
    rows = [run(a, f, s, model) for s in sizes for f in fabrics]
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{a.data_bytes / 1e12:g} TB, disk {a.mixed_mbps:g} MB/s mixed (a node merges at most "
          f"{a.mixed_mbps / 2:g} MB/s), {a.request_bytes}-byte requests, {a.sim_us:g} us "
          f"simulated ({a.warmup_us:g} warm-up)")
    print(f"{'topology':18} {'nodes':>6} {'MB/node':>8} {'offered':>8} {'accepted':>9} "
          f"{'hops':>5} {'OR-exh':>6} {'disk s':>7} {'net s':>7} {'phase s':>8} bound")
    for r in rows:
        print(f"{r['topology']:18} {r['nodes']:>6} {r['per_node_bytes'] / 1e6:>8.1f} "
              f"{r['offered_mbps']:>8.1f} {r['accepted_mbps']:>9.1f} {r['mean_hops']:>5.2f} "
              f"{r['or_exhausted']:>6.2f} {r['disk_s']:>7.3f} {r['network_s']:>7.3f} "
              f"{r['phase_s']:>8.3f} {r['bound']}")
    print("MB/s per node; OR-exh: share of NIC time out of outstanding requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
