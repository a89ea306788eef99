#!/usr/bin/env python3
"""libmsg against perftest on rxe0, in the same boot (run inside the Soft-RoCE guest by
tests/softroce/suite.sh): ping-pong bandwidth at 1 to 16 MiB.

For each size, msg-pingpong over the native verbs transport with each long-message protocol
(sendrecv, rdma, rdma-write and auto) against perftest's ping-pong of the same operation
(ib_send_lat, ib_read_lat, ib_write_lat: bytes over its typical one-way time, or over the
whole read, which is one-way data). Both sides move one message at a time, so the ratio
libmsg/perftest compares like with like; perftest's streaming figures (ib_send_bw,
ib_read_bw, ib_write_bw, many messages in flight; printed in MiB/s, shown here in MB/s) are
the fabric's ceiling, printed beside them. MB = 10^6 bytes. Figures are printed, never
judged: a benchmark, not a test.

usage: verbs_ratios.py [--build DIR] [--sizes 1M,4M,16M] [--json]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

SERVER_ADDR = "10.9.9.1"
PORT = 18515
# perftest operation, its ping-pong test, its streaming test, and the libmsg protocol that
# moves data the same way.
OPERATIONS = [
    ("send", "ib_send_lat", "ib_send_bw", "sendrecv"),
    ("read", "ib_read_lat", "ib_read_bw", "rdma"),
    ("write", "ib_write_lat", "ib_write_bw", "rdma-write"),
]


def size_bytes(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (like 1M or 4096)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def iterations(size):
    """Round trips: rxe moves some 50-70 MB/s here, so a few of the large ones are enough."""
    return max(5, min(20, (16 << 20) // size))


def wait_listening(port, seconds=10.0):
    """Waits for a listener on `port`, by ss: connecting to look would take the one
    connection a perftest server accepts."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ss = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        if re.search(rf":{port}\s", ss):
            return True
        time.sleep(0.1)
    return False


def perftest(tool, size):
    """One perftest pair on rxe0; the first data row's numeric columns, or None."""
    args = [tool, "-d", "rxe0", "-x", "1", "-F", "-p", str(PORT), "-s", str(size),
            "-n", str(iterations(size))]
    server = subprocess.Popen(["timeout", "120"] + args, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        # The server's TCP side channel: perftest clients do not retry their connect.
        wait_listening(PORT)
        client = subprocess.run(["timeout", "120"] + args + [SERVER_ADDR], capture_output=True,
                                text=True)
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    for line in client.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[0] == str(size):
            try:
                return [float(c) for c in cols]
            except ValueError:
                return None
    return None


def pingpong_mb_s(tool, size):
    """MB/s of a perftest ping-pong: bytes over the typical one-way (or read) time."""
    row = perftest(tool, size)
    # #bytes #iterations t_min t_max t_typical ...
    return size / row[4] if row and len(row) > 4 and row[4] > 0 else None


def streaming_mb_s(tool, size):
    row = perftest(tool, size)
    # #bytes #iterations BW_peak BW_average[MiB/s] MsgRate
    return row[3] * 1.048576 if row and len(row) > 3 else None


def libmsg_mb_s(build, protocol, size):
    """msg-pingpong over native verbs at one size: MB/s, or None."""
    env = dict(os.environ, VIADUCT_TRANSPORT="verbs")
    cmd = [os.path.join(build, "libmsg/tools/msgrun"), "-n", "2",
           os.path.join(build, "libmsg/bench/msg-pingpong"), "--min", str(size),
           "--max", str(size), "--iters", str(iterations(size)), "--warmup", "1",
           "--protocol", protocol, "--json"]
    run = subprocess.run(["timeout", "300"] + cmd, capture_output=True, text=True, env=env)
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            results = json.loads(line)["results"]
            return results[0]["bandwidth_mbps"] if results else None
    sys.stderr.write(f"verbs_ratios: msg-pingpong --protocol {protocol} printed no figures: "
                     f"{(run.stdout + run.stderr).strip()[-400:]}\n")
    return None


def ratio(a, b):
    return a / b if a and b else None


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--sizes", default="1M,4M,16M",
                    type=lambda t: [size_bytes(s) for s in t.split(",")])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = args.sizes
    if any(s & (s - 1) for s in sizes):
        ap.error("--sizes: powers of two only (msg-pingpong's sizes)")
    rows = []
    for size in sizes:
        auto = libmsg_mb_s(args.build, "auto", size)
        for op, lat_tool, bw_tool, protocol in OPERATIONS:
            peer = pingpong_mb_s(lat_tool, size)
            mine = libmsg_mb_s(args.build, protocol, size)
            rows.append({"bytes": size, "operation": op, "perftest": lat_tool,
                         "perftest_mb_s": peer, "protocol": protocol, "libmsg_mb_s": mine,
                         "ratio": ratio(mine, peer), "auto_mb_s": auto,
                         "auto_ratio": ratio(auto, peer),
                         "streaming": bw_tool, "streaming_mb_s": streaming_mb_s(bw_tool, size)})
    if args.json:
        print(json.dumps({"benchmark": "verbs_ratios", "rows": rows}))
        return 0
    print(f"{'bytes':>9} {'op':>5} {'perftest':>12} {'MB/s':>8} {'libmsg':>10} {'MB/s':>8} "
          f"{'ratio':>6} {'auto MB/s':>10} {'ratio':>6} {'streaming MB/s':>15}")
    for r in rows:
        print(f"{r['bytes']:>9} {r['operation']:>5} {r['perftest']:>12} "
              f"{fmt(r['perftest_mb_s']):>8} {r['protocol']:>10} {fmt(r['libmsg_mb_s']):>8} "
              f"{fmt(r['ratio'], 2):>6} {fmt(r['auto_mb_s']):>10} {fmt(r['auto_ratio'], 2):>6} "
              f"{fmt(r['streaming_mb_s']):>15}")
    ratios = sorted(r["ratio"] for r in rows if r["ratio"] is not None)
    if ratios:
        print(f"libmsg/perftest ping-pong: median {ratios[len(ratios) // 2]:.2f}, "
              f"lowest {ratios[0]:.2f}, highest {ratios[-1]:.2f} over {len(ratios)} cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
