#!/usr/bin/env python3
"""The needle finder on real 4-node jobs: a clean run names no needle, and a run with one
needle injected names that node with that cause.

usage: needle_test.py [--repeat N] [--kinds K,K...] [--records R] [--verbose]
  --repeat N   runs every kind N times (default 1), the injected node changing from run to run,
               and prints the tally per kind ("disk: 10 of 10 named correctly")
  --kinds      which of clean, partition, disk, memory, cpu to run (default: all; cpu only
               where this process may run on 2 CPUs or more: see below)
  --records R  records per node (default 2,000,000 100-byte records: phase 1 lasts one to a
               few seconds, long enough to judge)
  --verbose    prints every run's phase times and needles

Needles are injected with SORTAPP_TEST_NEEDLE=NODE:KIND (sortapp/cluster/node/test_needle.hpp):
disk (in proportion to what its local phases move, the node writes 4 KiB pieces, each flushed
to the device before the next: a busy disk that delivers little), memory (the node drops and
touches again pages of a mapped file: major faults), cpu (the node forks spinning processes).
A larger partition is one node given PARTITION_FACTOR times the others' input.

`sortapp run` puts every node on this host, so they share its CPUs and its disk. Left free to
run on every CPU, the nodes all count a CPU hog among their "other processes", and the cpu
needle could not be singled out. So the cpu needle runs 3 nodes with `--bind-to core`: on 2
CPUs, nodes 0 and 2 share CPU 0 and node 1 has CPU 1 with the monitor, as on 2 hosts. A node
bound to fewer CPUs than the host's counts the CPU time of those only, less its job mates' (the
job's other processes bound there), and the hog, forked by the victim, inherits its CPU. The
victim is node 1, the one node alone on its CPU whatever the number of CPUs (2 or more). The disk needle can be singled out because the slow node's phase lasts past the
others': its own phase is mostly the slow writes, the others' mostly their own full-speed
transfers.

Binaries come from SORTAPP_BIN and SORTGEN_BIN (`sortapp run` finds msgrun as the cluster tests
do). Where the temporary directory is on no block device (a tmpfs), the disk and memory
needles are left out: there is no device to count and nothing to page in.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SLOW, check, failures  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
NODES = 4
CPU_NODES = 3  # the cpu needle's job (see above)
# Every job judges stragglers past 1.5x the median (--straggler 1.5) rather than the default
# 1.25x. A phase is judged only when its median lasts at least timing noise / excess
# (sortapp/include/sortapp/needle.hpp): 0.2 s / 0.25 = 0.8 s by default, 0.5 s at 1.5. The unhurt
# nodes of 1,000,000 records each finished their one-pass phase in 0.44 to 0.91 s on the
# 2-CPU test machine, often under the default floor, and the needle was then never judged; with
# 2,000,000 records and the 1.5 floor they are well past it, and the victims (2-6x the median
# at 1,000,000 records) still far past 1.5x.
STRAGGLER = 1.5
CPU_ATTEMPTS = 3
# The node with the larger partition holds this many times the others' input. Twice is not
# enough where the nodes share one host: once the others are done, the last node has the
# host's CPUs and disk to itself and sorts its extra records several times faster. Measured
# on the 2-CPU development machine under load: twice the input took 1.1x the median's time;
# 4x, 1.27x to 2.06x in ten runs; 6x, 1.79x to 2.77x in five.
PARTITION_FACTOR = 6
# The cause the finder should give for each injected kind, and a word its text must carry with
# the figure behind it.
CAUSES = {"partition": ("partition", f"{PARTITION_FACTOR}.00x the others'"),
          "disk": ("disk", "MB/s while busy against"), "memory": ("paging", "major faults"),
          "cpu": ("cpu", "% of its CPU")}
ALL_KINDS = ["clean", "partition", "disk", "memory", "cpu"]


def generate(path, records, first):
    subprocess.run([SORTGEN, "--seed", "7", "--first", str(first), str(records), path],
                   check=True, capture_output=True)


def make_inputs(d, records):
    """d/even/in.K: node K's `records`; d/big: PARTITION_FACTOR times that, which stands in
    for the even input of the node given the larger partition."""
    os.mkdir(f"{d}/even")
    for k in range(NODES):
        generate(f"{d}/even/in.{k}", records, k * records)
    generate(f"{d}/big", PARTITION_FACTOR * records, NODES * records)


def larger_partition(d, node):
    """A directory of inputs where `node` holds d/big and the others their even inputs."""
    sub = tempfile.mkdtemp(dir=d)
    for k in range(NODES):
        os.link(f"{d}/big" if k == node else f"{d}/even/in.{k}", f"{sub}/in.{k}")
    return sub


def sort(d, inputs, env, nodes=NODES, extra=()):
    """One `sortapp run --json` of `nodes` nodes; its report, or None after recording why it
    failed."""
    out = tempfile.mkdtemp(dir=d)
    try:
        r = subprocess.run([SORTAPP, "run", "-n", str(nodes), "--input", f"{inputs}/in.{{rank}}",
                            "--output", f"{out}/out.{{rank}}", "--json",
                            "--timeout", str(300 * SLOW), *extra],
                           capture_output=True, text=True, timeout=400 * SLOW, env=env)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if not check(r.returncode == 0, f"sortapp run exit {r.returncode}: {r.stderr[-2000:]}"):
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def phase_times(report):
    return "; ".join(f"node {n['node']}: " + ", ".join(f"{p['phase']} {p['seconds']:.2f} s"
                                                       for p in n["phases"])
                     for n in report["per_node"])


def judge(kind, node, report, verbose):
    """Whether the report names exactly what was injected; prints what it named otherwise."""
    needles = report["needles"]
    if kind == "clean":
        ok = not needles
    else:
        cause, word = CAUSES[kind]
        ok = any(n["node"] == node and n["cause"] == cause and word in n["text"]
                 for n in needles) and all(n["node"] == node for n in needles)
    if verbose or not ok:
        what = "clean" if kind == "clean" else f"{kind} on node {node}"
        print(f"{what}: {'ok' if ok else 'WRONG'}; {phase_times(report)}", flush=True)
        for n in needles:
            print(f"  {n['text']}", flush=True)
            if not ok:
                print(f"  figures: {json.dumps(n['figures'])}", flush=True)
    return ok


def cpu_needle_showed(node, report):
    """Whether the cpu needle made its node a straggler at all: some phase of the victim lasts
    STRAGGLER times the others' median. Other work on the host (compilers on every CPU, say)
    can slow the unhurt nodes as much as the hog slows the victim; such a run has no needle to
    find, and naming none is right."""
    per = {n["node"]: {p["phase"]: p["seconds"] for p in n["phases"]} for n in report["per_node"]}
    for phase, seconds in per.get(node, {}).items():
        others = sorted(t[phase] for k, t in per.items() if k != node and phase in t)
        if others and seconds >= STRAGGLER * others[len(others) // 2]:
            return True
    return False


def run_kind(d, kind, attempt, verbose):
    """Whether the needle was named right. A cpu needle that did not make its node a straggler
    (cpu_needle_showed) is run again, up to CPU_ATTEMPTS times in all: only a run that shows
    the needle can tell whether the finder names it."""
    for tries in range(1, CPU_ATTEMPTS + 1 if kind == "cpu" else 2):
        report, node = run_once(d, kind, attempt)
        if report is None:
            return False
        if kind != "cpu" or cpu_needle_showed(node, report):
            return judge(kind, node, report, verbose)
        print(f"cpu on node {node}, try {tries}: the node was no straggler "
              f"({phase_times(report)}); the host is busy, trying again", flush=True)
    return check(False, f"the cpu needle never made node 1 a straggler in {CPU_ATTEMPTS} runs")


def run_once(d, kind, attempt):
    # The cpu needle: 3 nodes bound to CPUs, node 1 the victim (see above).
    nodes, extra = (CPU_NODES, ["--bind-to", "core"]) if kind == "cpu" else (NODES, [])
    extra += ["--straggler", str(STRAGGLER)]
    node = 1 if kind == "cpu" else (attempt + 1) % nodes  # else a different node each time
    env = dict(os.environ)
    env.pop("SORTAPP_TEST_NEEDLE", None)
    inputs = larger_partition(d, node) if kind == "partition" else f"{d}/even"
    if kind not in ("clean", "partition"):
        env["SORTAPP_TEST_NEEDLE"] = f"{node}:{kind}"
    report = sort(d, inputs, env, nodes, extra)
    if kind == "partition":
        shutil.rmtree(inputs)
    return report, node


def kinds_seen_here(d, kinds):
    """The kinds whose counters can be seen here: the disk and memory needles need a block
    device under `d` (on a tmpfs there is no device to count and nothing to page in), the cpu
    needle a CPU for each of its nodes."""
    if "cpu" in kinds and len(os.sched_getaffinity(0)) < 2:
        print("one CPU here: the cpu needle is skipped")
        kinds = [k for k in kinds if k != "cpu"]
    if os.major(os.stat(d).st_dev) != 0:
        return kinds
    print(f"{d} is on no block device: the disk and memory needles are skipped")
    return [k for k in kinds if k not in ("disk", "memory")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(ALL_KINDS))
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown:
        print(f"unknown kinds {unknown} (of {ALL_KINDS})")
        return 2
    d = tempfile.mkdtemp(prefix="sortapp-needles-")
    kinds = kinds_seen_here(d, kinds)
    tally = {k: 0 for k in kinds}
    try:
        make_inputs(d, args.records)
        for attempt in range(args.repeat):
            for kind in kinds:
                right = run_kind(d, kind, attempt, args.verbose)
                tally[kind] += right
                check(right, f"{kind}, run {attempt + 1}: the needles are not the injected one")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    for kind in kinds:
        print(f"{kind}: {tally[kind]} of {args.repeat} named correctly", flush=True)
    print(f"needles: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
