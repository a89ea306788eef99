#!/usr/bin/env python3
"""VIADUCT_TRACE end to end: a three-rank job under msgrun writes one trace file per rank
whose records match the messages trace_worker sends (counts, bytes, peers, eager versus long
protocol, post before completion); a cap keeps that many records and counts the rest; and
with VIADUCT_TRACE unset no file appears.

usage: trace_test.py PROTOCOL   (sendrecv | rdma | rdma-write; msgrun from VIADUCT_MSGRUN,
the rank program from VIADUCT_TRACE_WORKER)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SLOW, check, failures  # noqa: E402

RANKS = 3
EAGER, LONG, EAGER_BYTES, LONG_BYTES = 6, 2, 100, 300 * 1024
LONG_NAME = {"sendrecv": "send_recv", "rdma": "rdma_read", "rdma-write": "rdma_write"}


def run_job(env):
    return subprocess.run([os.environ["VIADUCT_MSGRUN"], "-n", str(RANKS),
                           os.environ["VIADUCT_TRACE_WORKER"]],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120 * SLOW)


def read_trace(path):
    """(header fields, records as dicts, end fields) of one trace file."""
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines[0] == "# viaduct-trace 1", f"{path}: first line {lines[0]!r}")
    head = lines[1].split()[1:]
    header = dict(zip(head[0::2], (int(v) for v in head[1::2])))
    cols = lines[2].split(",")
    check(cols == ["rank", "kind", "peer", "tag", "bytes", "protocol", "post_ns", "done_ns",
                   "status"], f"{path}: column line {lines[2]!r}")
    end = lines[-1].split()
    check(end[:3] == ["#", "end", "records"], f"{path}: last line {lines[-1]!r}")
    records = [dict(zip(cols, line.split(","))) for line in lines[3:-1]]
    return header, records, {"records": int(end[3]), "dropped": int(end[5])}


def expected(rank, long_name):
    """The multiset of (kind, peer, tag, bytes, protocol) a rank must have recorded."""
    want = []
    peers = range(1, RANKS) if rank == 0 else [0]
    kind = "send" if rank == 0 else "recv"
    for p in peers:
        want += [(kind, p, 1, EAGER_BYTES, "eager")] * EAGER
        want += [(kind, p, 2, LONG_BYTES, long_name)] * LONG
        want += [("recv" if rank == 0 else "send", p, 3, 8, "eager")]
    return sorted(want)


def check_full(tmp, long_name):
    for rank in range(RANKS):
        path = os.path.join(tmp, f"t.{rank}.csv")
        if not check(os.path.exists(path), f"{path} was written"):
            continue
        header, records, end = read_trace(path)
        check(header.get("rank") == rank and header.get("size") == RANKS, f"header {header}")
        check("clock_realtime_ns" in header and "clock_monotonic_ns" in header, "clocks")
        check(end == {"records": len(records), "dropped": 0}, f"rank {rank} end {end}")
        got = sorted((r["kind"], int(r["peer"]), int(r["tag"]), int(r["bytes"]), r["protocol"])
                     for r in records)
        check(got == expected(rank, long_name), f"rank {rank} records {got}")
        for r in records:
            check(int(r["rank"]) == rank and r["status"] == "0", f"rank {rank} record {r}")
            check(header["clock_monotonic_ns"] <= int(r["post_ns"]) <= int(r["done_ns"]),
                  f"rank {rank} times {r}")
    check(not [n for n in os.listdir(tmp) if ".tmp" in n], "no temporary file left")


def main():
    protocol = sys.argv[1]
    base = dict(os.environ, VIADUCT_PROTOCOL=protocol)
    base.pop("VIADUCT_TRACE", None)
    with tempfile.TemporaryDirectory() as tmp:
        res = run_job(dict(base, VIADUCT_TRACE=os.path.join(tmp, "t.%r.csv")))
        if check(res.returncode == 0, f"traced job exit {res.returncode}: {res.stderr}"):
            check_full(tmp, LONG_NAME[protocol])
    with tempfile.TemporaryDirectory() as tmp:
        res = run_job(dict(base, VIADUCT_TRACE=os.path.join(tmp, "capped"),
                           VIADUCT_TRACE_RECORDS="4"))
        check(res.returncode == 0, f"capped job exit {res.returncode}: {res.stderr}")
        for rank in range(RANKS):
            path = os.path.join(tmp, f"capped.{rank}")
            if check(os.path.exists(path), f"{path} was written"):
                _, records, end = read_trace(path)
                total = len(expected(rank, LONG_NAME[protocol]))
                check(len(records) == 4 and end == {"records": 4, "dropped": total - 4},
                      f"capped rank {rank}: {len(records)} records, end {end}")
    with tempfile.TemporaryDirectory() as tmp:
        res = run_job(dict(base, VIADUCT_TRACE=""))
        check(res.returncode == 0, f"untraced job exit {res.returncode}: {res.stderr}")
        check(os.listdir(tmp) == [] and not os.path.exists("t.0.csv"), "no trace file when off")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
