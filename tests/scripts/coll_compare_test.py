#!/usr/bin/env python3
"""scripts/coll-compare.py against stand-ins for msgrun, mpirun, msg-coll and mpi-coll whose
latencies are known: the ratios, the medians over sizes and over runs (the median of three
runs, one of them an outlier), the order of a pair alternating from run to run, a failed job
left out of the medians and reported (exit 1), the kept JSON, and bad options (exit 2).
usage: coll_compare_test.py COLL_COMPARE_PY"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from bench_fakes import LAUNCHERS, make_fakes  # noqa: E402

SCRIPT = os.path.abspath(sys.argv[1])
failures = []

# Latency = base * (1 + bytes / 1000) us; libmsg's base is 10, MPI's 20 (ratio 2) on shm and
# MPI's 5 (ratio 0.5) on tcp. Run 2 of shm P=2 is an outlier for libmsg (base 1000), which the
# median of three runs must ignore. MPI over tcp at P=4 fails.
FAKES = {
    **LAUNCHERS,
    "bin/fi_info": """
print("libfabric:   0.0.0-fake")
""",
}
FIGURES = """
def sizes():
    b, top = int(arg("--min-bytes")), int(arg("--max-bytes"))
    while b <= top:
        yield b
        b *= 4
def emit(base):
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(WHO + " " + os.environ["FAKE_RANKS"] + "\\n")
    results = [{"collective": c, "bytes": b, "latency_us": base * (1 + b / 1000)}
               for c in arg("--collectives").split(",") for b in sizes()]
    print("a line that is not JSON")
    print(json.dumps({"results": results}))
"""
FAKES["build/libmsg/bench/msg-coll"] = FIGURES + """
WHO = "msg"
tcp = arg("--provider", "shm") != "shm"  # no provider: the shm transport
runs = os.path.join(os.environ["FAKE_DIR"], "msg-shm-p2-runs")
if not tcp and os.environ["FAKE_RANKS"] == "2":
    with open(runs, "a") as f:
        f.write("x")
    if os.path.getsize(runs) == 2:
        emit(1000); sys.exit(0)
emit(10)
"""
FAKES["build/libmsg/bench/mpi-coll"] = FIGURES + """
WHO = "mpi"
tcp = os.environ["FAKE_MPI_TCP"] == "1"
if tcp and os.environ["FAKE_RANKS"] == "4":
    print("mpi-coll: failed", file=sys.stderr); sys.exit(3)
emit(5 if tcp else 20)
"""


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(root, *args):
    env = dict(os.environ, PATH=os.path.join(root, "bin") + ":" + os.environ["PATH"],
               FAKE_DIR=root, FAKE_LOG=os.path.join(root, "order.log"))
    return subprocess.run([sys.executable, SCRIPT, "-b", os.path.join(root, "build"), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def main():
    with tempfile.TemporaryDirectory() as root:
        make_fakes(root, FAKES)
        out = os.path.join(root, "out")
        r = run(root, "-o", out, "--ranks", "2 4", "--collectives", "bcast,alltoall",
                "--min-bytes", "1000", "--max-bytes", "16000", "--runs", "3")
        check(r.returncode == 1, f"a failed job: exit {r.returncode}, stderr {r.stderr!r}")
        check("bytes      P=2" in r.stdout, f"the tables: {r.stdout!r}")
        # shm bcast at 1000 B: MPI 20 * 2 = 40 us, libmsg 10 * 2 = 20 us, ratio 2.
        check("1000       40 / 20 (2)" in r.stdout, f"shm 1000 B row: {r.stdout!r}")
        # tcp at P=4: MPI failed every run, so no ratio; P=2 MPI 5 * 17 = 85, libmsg 170.
        check("16000      85 / 170.0 (0.5)" in r.stdout and "- / 170.0 (-)" in r.stdout,
              f"tcp 16000 B row: {r.stdout!r}")
        check("shm     bcast       2        2" in r.stdout, f"shm medians: {r.stdout!r}")
        check("tcp     alltoall    0.5      -" in r.stdout, f"tcp medians: {r.stdout!r}")
        check("# no figures: coll-tcp-p4-run1-mpi: FAILED(exit 3)" in r.stdout,
              f"the failure named: {r.stdout!r}")
        with open(os.path.join(out, "coll-compare.json")) as f:
            doc = json.load(f)
        cell = [c for c in doc["cells"] if (c["fabric"], c["ranks"], c["collective"], c["bytes"])
                == ("shm", 2, "alltoall", 4000)]
        check(len(cell) == 1 and cell[0]["runs"] == [3, 3] and cell[0]["ratio"] == 2.0,
              f"the median of three runs, the outlier ignored: {cell}")
        check(len(doc["cells"]) == 2 * 2 * 2 * 3, f"cells: {len(doc['cells'])}")
        check(len(doc["failed_jobs"]) == 3, f"failed jobs: {doc['failed_jobs']}")
        # Run 1: shm P=2 and 4, then tcp P=2 and 4 (MPI at P=4 fails before it logs), MPI
        # first; run 2 starts at entry 7, libmsg first.
        with open(os.path.join(root, "order.log")) as f:
            order = f.read().split("\n")
        check(order[:2] == ["mpi 2", "msg 2"] and order[7:9] == ["msg 2", "mpi 2"],
              f"the pair's order alternates from run to run: {order}")
        r = run(root, "-o", os.path.join(root, "j"), "--ranks", "2", "--fabrics", "shm",
                "--min-bytes", "8", "--max-bytes", "8", "--json")
        doc = json.loads(r.stdout) if r.returncode == 0 else {}
        check([m["median_ratio"] for m in doc.get("medians", [])] == [2.0, 2.0, 2.0],
              f"--json: {r.returncode} {r.stdout!r} {r.stderr!r}")
        for bad, word in ((["--ranks", "1"], "--ranks"), (["--fabrics", "ib"], "--fabrics"),
                          (["--collectives", "scan"], "--collectives"),
                          (["--max-bytes", "lots"], "--max-bytes"), (["--runs", "0"], "--runs")):
            r = run(root, "-o", os.path.join(root, "bad"), *bad)
            check(r.returncode == 2 and word in r.stderr, f"{bad}: {r.returncode} {r.stderr!r}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("coll-compare.py: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
