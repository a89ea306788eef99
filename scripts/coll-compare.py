#!/usr/bin/env python3
"""Runs msg-coll (libmsg's collectives) beside mpi-coll (Open MPI's) in one go and prints, per
fabric and collective, the latency of each size at each job size with the libmsg/MPI speed
ratio (MPI latency / libmsg latency: above 1 libmsg is faster), then the median ratio over
sizes for each collective and job size. With --runs N the jobs run N times, alternating
libmsg and MPI, and each cell is the median of its N latencies.

Every job leaves NAME.cmd, NAME.out, NAME.log, NAME.status and NAME.json in --out (as
scripts/compare.py does, whose runner this uses); the tables and coll-compare.json (every cell
and every median) are made from those files. Python 3 standard library only."""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

# compare.py's runner, figures and machine lines, from beside this script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

ROOT = compare.ROOT
COLLECTIVES = ("bcast", "allreduce", "alltoall")
FABRICS = compare.ALLTOALL_FABRICS  # fabric: (libmsg provider, Open MPI options)

DESCRIPTION = """\
OSU-style latency of broadcast, allreduce (uint32 sum) and alltoall (bytes per peer), libmsg
(msg-coll under msgrun) against Open MPI (mpi-coll under mpirun), sizes from --min-bytes up by
x4 to --max-bytes, at each job size of --ranks, on each fabric of --fabrics:
  shm  libmsg's default (its shm transport) vs Open MPI default (ob1 + vader, coll tuned)
  tcp  libmsg --provider "tcp;ofi_rxm"  vs Open MPI pml cm + mtl ofi "tcp;ofi_rxm"
Both programs check every size's result before they print a figure. A job that fails or
times out is reported as such and its cells are left out of the medians."""


def die(msg):
    print(f"coll-compare.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="scripts/coll-compare.py", description=DESCRIPTION, allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-b", "--build", default="build", metavar="DIR",
                   help="meson build directory (default: build)")
    p.add_argument("-o", "--out", default="", metavar="DIR",
                   help="raw results (default: results/coll-compare-<date>-<time>)")
    p.add_argument("--ranks", default="2 4 8", metavar='"LIST"', help='job sizes (default "2 4 8")')
    p.add_argument("--fabrics", default="shm,tcp", metavar="LIST",
                   help="comma-separated subset of shm,tcp (default both)")
    p.add_argument("--collectives", default=",".join(COLLECTIVES), metavar="LIST",
                   help="comma-separated subset of " + ",".join(COLLECTIVES))
    p.add_argument("--min-bytes", default="8", metavar="SIZE", help="smallest size (default 8)")
    p.add_argument("--max-bytes", default="16M", metavar="SIZE",
                   help="largest size (default 16M)")
    p.add_argument("--iters", default="200", metavar="N",
                   help="timed calls per size up to 8 KiB (default 200; fewer above)")
    p.add_argument("--runs", default="1", metavar="N",
                   help="run every job N times, alternating libmsg and MPI; cells are medians")
    p.add_argument("--timeout", default="300", metavar="S",
                   help="limit per job in seconds (default 300)")
    p.add_argument("--json", action="store_true",
                   help="print coll-compare.json's document instead of the tables")
    args = p.parse_args(argv)
    count = re.compile(r"[1-9][0-9]*")
    for name in ("iters", "runs", "timeout"):
        if not count.fullmatch(getattr(args, name)):
            die(f"--{name}: '{getattr(args, name)}' is not a count")
    for r in args.ranks.split():
        if not count.fullmatch(r) or int(r) < 2:
            die(f"--ranks: '{r}' is not >= 2")
    if not args.ranks.split():
        die("--ranks: no job size")
    for name, known in (("fabrics", FABRICS), ("collectives", COLLECTIVES)):
        for item in getattr(args, name).split(","):
            if item not in known:
                die(f"--{name}: unknown '{item}' (known: {', '.join(known)})")
    for name in ("min_bytes", "max_bytes"):
        if not re.fullmatch(r"[0-9]+([KMG](iB|B)?)?", getattr(args, name)):
            die(f"--{name.replace('_', '-')}: '{getattr(args, name)}' is not a size")
    return args


class Plan:
    """What compare.Runner needs (out, timeout, build) and what the jobs are."""

    def __init__(self, args):
        self.build = compare.build_directory(args.build)
        self.timeout = args.timeout
        self.out = args.out or os.path.join(
            ROOT, "results", "coll-compare-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
        self.ranks = args.ranks.split()
        self.fabrics = args.fabrics.split(",")
        self.collectives = args.collectives.split(",")
        self.runs = int(args.runs)
        self.bench = os.path.join(self.build, "libmsg", "bench")
        self.msgrun = os.path.join(self.build, "libmsg", "tools", "msgrun")
        self.common = ["--json", "--collectives", args.collectives, "--min-bytes",
                       args.min_bytes, "--max-bytes", args.max_bytes, "--iters", args.iters]

    def jobs(self):
        """(fabric, P, run, name prefix) of every job pair, in the order they run."""
        for run in range(1, self.runs + 1):
            for fabric in self.fabrics:
                for p in self.ranks:
                    yield fabric, p, run, f"coll-{fabric}-p{p}-run{run}"


def run_jobs(plan, runner):
    for fabric, p, run, base in plan.jobs():
        provider, mpi_args = FABRICS[fabric]
        compare.progress(f"collectives, {fabric}, P={p}, run {run} of {plan.runs}:")
        # Which goes first alternates from run to run, so neither always meets a warmer machine.
        pair = [
            (f"{base}-mpi", [*compare.MPIRUN, "-np", p, *mpi_args,
                             os.path.join(plan.bench, "mpi-coll"), *plan.common]),
            (f"{base}-msg", [plan.msgrun, "-n", p, os.path.join(plan.bench, "msg-coll"),
                             *plan.common, *compare.provider_args(provider)]),
        ]
        for name, cmd in (pair if run % 2 else reversed(pair)):
            runner.run(name, cmd)


def latencies(figures, name):
    """{(collective, bytes): latency_us} of one job; empty when it gave no figures."""
    if figures.status(name) != "ok":
        return {}
    doc = figures.document(name)
    out = {}
    for r in (doc or {}).get("results") or []:
        if not isinstance(r, dict):
            continue
        lat, coll, nbytes = r.get("latency_us"), r.get("collective"), r.get("bytes")
        if isinstance(lat, float) and lat > 0 and isinstance(nbytes, float):
            out[(coll, int(nbytes))] = lat
    return out


def collect(plan, figures):
    """Every cell: fabric, P, collective, bytes, the median latencies and their ratio."""
    samples = {}  # (fabric, P, collective, bytes) -> {"mpi": [...], "msg": [...]}
    failed = []
    for fabric, p, _, base in plan.jobs():
        for who in ("mpi", "msg"):
            got = latencies(figures, f"{base}-{who}")
            if not got:
                failed.append(f"{base}-{who}: {figures.status(f'{base}-{who}')}")
            for (coll, nbytes), lat in got.items():
                samples.setdefault((fabric, p, coll, nbytes), {"mpi": [], "msg": []})[who].append(
                    lat)
    cells = []
    for (fabric, p, coll, nbytes), s in sorted(
            samples.items(), key=lambda kv: (kv[0][0], int(kv[0][1]), kv[0][2], kv[0][3])):
        mpi = statistics.median(s["mpi"]) if s["mpi"] else None
        msg = statistics.median(s["msg"]) if s["msg"] else None
        cells.append({"fabric": fabric, "ranks": int(p), "collective": coll, "bytes": nbytes,
                      "mpi_latency_us": mpi, "libmsg_latency_us": msg,
                      "runs": [len(s["mpi"]), len(s["msg"])],
                      "ratio": round(mpi / msg, 3) if mpi and msg else None})
    return cells, failed


def medians(cells):
    """The median ratio over sizes for each fabric, collective and P."""
    groups = {}
    for c in cells:
        if c["ratio"] is not None:
            groups.setdefault((c["fabric"], c["collective"], c["ranks"]), []).append(c["ratio"])
    return [{"fabric": f, "collective": coll, "ranks": p, "sizes": len(r),
             "median_ratio": round(statistics.median(r), 3), "min_ratio": min(r),
             "max_ratio": max(r)} for (f, coll, p), r in sorted(groups.items())]


def fmt(v):
    return "-" if v is None else ("%.1f" % v if v >= 100 else "%.3g" % v)


def tables(plan, cells, summary):
    lines = []
    ranks = [int(p) for p in plan.ranks]
    for fabric in plan.fabrics:
        for coll in plan.collectives:
            rows = {}
            for c in cells:
                if c["fabric"] == fabric and c["collective"] == coll:
                    rows.setdefault(c["bytes"], {})[c["ranks"]] = c
            lines += ["", f"## {coll}, {fabric}: latency us, MPI / libmsg (ratio, above 1: "
                      "libmsg faster)",
                      "%-10s" % "bytes" + "".join(" %-28s" % f"P={p}" for p in ranks)]
            for nbytes in sorted(rows):
                row = "%-10s" % nbytes
                for p in ranks:
                    c = rows[nbytes].get(p)
                    text = "-" if c is None else (f"{fmt(c['mpi_latency_us'])} / "
                                                  f"{fmt(c['libmsg_latency_us'])} "
                                                  f"({fmt(c['ratio'])})")
                    row += " %-28s" % text
                lines.append(row)
    lines += ["", "## median over sizes of MPI latency / libmsg latency (above 1: libmsg faster)",
              "%-8s%-11s" % ("fabric", "collective") + "".join(" %-8s" % f"P={p}" for p in ranks)]
    for fabric in plan.fabrics:
        for coll in plan.collectives:
            got = {m["ranks"]: m["median_ratio"] for m in summary
                   if m["fabric"] == fabric and m["collective"] == coll}
            lines.append("%-8s%-11s" % (fabric, coll) +
                         "".join(" %-8s" % fmt(got.get(p)) for p in ranks))
    return lines


def main(argv=None):
    args = parse_args(argv)
    plan = Plan(args)
    try:
        os.makedirs(plan.out, exist_ok=True)
    except OSError as e:
        die(f"cannot create {plan.out} ({e.strerror})")
    runner = compare.Runner(plan)
    head = [f"# coll-compare.py, {len(os.sched_getaffinity(0))} CPUs; build {plan.build}; "
            f"raw results in {plan.out}",
            f"# {compare.versions()}",
            f"# at start: {compare.machine_load()}"]
    if not args.json:
        compare.show(head)
    run_jobs(plan, runner)
    cells, failed = collect(plan, runner.figures)
    summary = medians(cells)
    doc = {"benchmark": "coll-compare", "ranks": [int(p) for p in plan.ranks],
           "fabrics": plan.fabrics, "runs": plan.runs, "cells": cells, "medians": summary,
           "failed_jobs": failed, "load_at_end": compare.machine_load()}
    compare.publish_json(os.path.join(plan.out, "coll-compare.json"), doc)
    if args.json:
        print(json.dumps(doc))
    else:
        compare.show(tables(plan, cells, summary))
        compare.show(["", f"# at end: {compare.machine_load()}",
                      f"# JSON: {os.path.join(plan.out, 'coll-compare.json')}"])
        for f in failed:
            compare.show([f"# no figures: {f} (see its .log)"])
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
