#!/usr/bin/env python3
"""scripts/compare.py against stand-ins for the benchmarks and their peers (a fake build
directory, and mpirun, fi_pingpong and ss first on PATH) whose figures are known: the tables,
the ratios, every way a run can fail (exit status, time limit, no JSON, no figure, a failed
fi_pingpong server, a program not built), the kept JSON, the exit status, and bad options.
usage: compare_test.py COMPARE_PY"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from bench_fakes import LAUNCHERS, make_fakes  # noqa: E402

COMPARE = os.path.abspath(sys.argv[1])
failures = []

# The stand-ins. Each prints what the real program would, from figures fixed per case.
FAKES = {
    **LAUNCHERS,
    "build/libmsg/bench/memcpy-bw": """
print("memcpy-bw: copying")
print(json.dumps({"benchmark": "memcpy-bw", "buffer_bytes": 134217728, "results": [
    {"threads": 1, "best_mbps": 9000.0}, {"threads": 2, "best_mbps": 15000.5}]}))
""",
    "build/libmsg/bench/mpi-alltoall": """
tcp = os.environ["FAKE_MPI_TCP"] == "1"
if tcp and os.environ["FAKE_RANKS"] == "4":
    sys.exit(3)
print(json.dumps({"per_rank_bidir_mbps": 250.5 if tcp else 1000}))
""",
    "build/libmsg/bench/msg-alltoall": """
provider, protocol = arg("--provider", "shm"), arg("--protocol")  # default: the shm transport
restricted = "--restricted" in sys.argv
if (provider, protocol, restricted, os.environ["FAKE_RANKS"]) == ("shm", "rdma-write", True, "4"):
    time.sleep(60)  # ended by --timeout
if provider != "shm" and protocol == "rdma":
    print("no figures today"); sys.exit(0)
mbps = {"auto": 1800, "sendrecv": 1500, "rdma": 2000, "rdma-write": 500}[protocol]
if provider != "shm":
    mbps = 50.125
doc = {"per_rank_bidir_mbps": mbps / (2 if restricted else 1)}
if provider != "shm" and protocol == "rdma-write":
    doc = {"other": 1}
print("{ not the JSON line")
print(json.dumps(doc))
""",
    "build/libmsg/bench/msg-pingpong": """
provider, protocol = arg("--provider", "shm"), arg("--protocol")
scale = (1 if provider == "shm" else 2) * {"auto": 0.25, "rdma": 0.5}.get(protocol, 1)
results = []
for b in (0, 8, 1048576, 16777216):
    # The latency sizes come only from the runs up to 8 bytes, the rest only from the others.
    if (protocol == "rdma-write" and b == 8) or (b <= 8) != (arg("--max") == "8"):
        continue
    lat = (1 + b / 1000) * scale
    results.append({"bytes": b, "latency_us": lat, "bandwidth_mbps": b / lat})
print(json.dumps({"results": results}))
""",
    # fi_pingpong -p PROVIDER -e rdm -I ITERS -S BYTES (-B PORT | -P PORT HOST)
    "bin/fi_pingpong": """
provider, size = arg("-p"), int(arg("-S"))
if "-B" in sys.argv:
    sys.exit(1 if (provider, size) == ("shm", 16777216) else 0)
if (provider, size) == ("tcp;ofi_rxm", 1048576):
    sys.exit(1)
print("bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec")
if (provider, size) == ("tcp;ofi_rxm", 8):
    print("8       10      =10      160         0.02s      0.01")
else:
    usec = (2 if provider == "shm" else 4) + size / 2000
    print(f"{size} {arg('-I')} ={arg('-I')} 0 0.1s {size / usec:.2f} {usec:.2f} 0.00")
""",
    # The server is "listening" at once.
    "bin/ss": """
print("State Recv-Q Send-Q Local Address:Port Peer Address:Port Process")
print("LISTEN 0 10 0.0.0.0:" + sys.argv[-1].split(":")[-1] + " 0.0.0.0:*")
""",
    "bin/fi_info": """
print("fi_info: 0.0\\nlibfabric:   0.0.0-fake\\nlibfabric api: 0.0")
""",
}

# What the fakes' figures give. (The shell version of compare printed the same tables, except
# that through jq 1.6 it let a run that prints no JSON line at all pass as "ok", shown as n/a.)
EXPECTED = """

## memory-copy limit (memcpy-bw, 134217728 B buffers, best of reps)
threads   MB/s copied
1         9000
2         15000.5

## all-to-all (msg-alltoall vs mpi-alltoall): 512 KiB x 3 to and from every peer
# per-rank bidirectional MB/s (sent + received) / elapsed, mean over ranks, median of 2 measurements in one job; (ratio vs MPI)
# memory-copy limit beside it: 9000 MB/s (1 thread), 15000.5 MB/s (2 threads)
# libmsg unrestricted
fabric P   buffers  MPI                auto               sendrecv           rdma               rdma-write        
shm    2   reuse    1000.0             1800.0 (1.80)      1500.0 (1.50)      2000.0 (2.00)      500.0 (0.50)      
shm    4   reuse    1000.0             1800.0 (1.80)      1500.0 (1.50)      2000.0 (2.00)      500.0 (0.50)      
tcp    2   reuse    250.5              50.1 (0.20)        50.1 (0.20)        FAILED(no JSON)    n/a               
tcp    4   reuse    FAILED(exit 3)     50.1 (-)           50.1 (-)           FAILED(no JSON)    n/a               
# libmsg restricted
fabric P   buffers  MPI                auto               sendrecv           rdma               rdma-write        
shm    2   reuse    1000.0             900.0 (0.90)       750.0 (0.75)       1000.0 (1.00)      250.0 (0.25)      
shm    4   reuse    1000.0             900.0 (0.90)       750.0 (0.75)       1000.0 (1.00)      TIMEOUT           
tcp    2   reuse    250.5              25.1 (0.10)        25.1 (0.10)        FAILED(no JSON)    n/a               
tcp    4   reuse    FAILED(exit 3)     25.1 (-)           25.1 (-)           FAILED(no JSON)    n/a               

## ping-pong (msg-pingpong vs fi_pingpong, rdm, two local processes)
# one-way latency us (round trip / 2); (ratio vs fi_pingpong, above 1: libmsg faster)
provider     bytes      fi_pingpong        auto               sendrecv           rdma               rdma-write        
shm          8          2                  0.252 (7.94)       1.01 (1.98)        0.504 (3.97)       n/a               
shm          1048576    526.3              262.4 (2.01)       1049.6 (0.50)      524.8 (1.00)       1049.6 (0.50)     
shm          16777216   FAILED(server exit 1) 4194.6 (-)         16778.2 (-)        8389.1 (-)         16778.2 (-)       
tcp;ofi_rxm  8          FAILED(no figures) 0.504 (-)          2.02 (-)           1.01 (-)           n/a               
tcp;ofi_rxm  1048576    FAILED(exit 1)     524.8 (-)          2099.2 (-)         1049.6 (-)         2099.2 (-)        
tcp;ofi_rxm  16777216   8392.6             8389.1 (1.00)      33556.4 (0.25)     16778.2 (0.50)     33556.4 (0.25)    
# bandwidth MB/s (bytes / one-way time); (ratio vs fi_pingpong)
provider     bytes      fi_pingpong        auto               sendrecv           rdma               rdma-write        
shm          8          4                  31.7 (7.94)        7.94 (1.98)        15.9 (3.97)        n/a               
shm          1048576    1992.4             3996.2 (2.01)      999.0 (0.50)       1998.1 (1.00)      999.0 (0.50)      
shm          16777216   FAILED(server exit 1) 3999.8 (-)         999.9 (-)          1999.9 (-)         999.9 (-)         
tcp;ofi_rxm  8          FAILED(no figures) 15.9 (-)           3.97 (-)           7.94 (-)           n/a               
tcp;ofi_rxm  1048576    FAILED(exit 1)     1998.1 (-)         499.5 (-)          999.0 (-)          499.5 (-)         
tcp;ofi_rxm  16777216   1999.0             1999.9 (1.00)      500.0 (0.25)       999.9 (0.50)       500.0 (0.25)      

"""


def check(cond, what, result=None):
    if not cond:
        if result is not None:
            what += (f"\n  exit {result.returncode}\n  stdout: {result.stdout[-3000:]}"
                     f"\n  stderr: {result.stderr[-2000:]}")
        failures.append(what)


def compare(top, *args):
    env = dict(os.environ, PATH=os.path.join(top, "bin") + os.pathsep + os.environ["PATH"])
    return subprocess.run([sys.executable, COMPARE, "--build", os.path.join(top, "build"),
                           *args], capture_output=True, text=True, env=env, timeout=300)


def read(path):
    with open(path) as f:
        return f.read()


def tables(stdout):
    """What stdout holds between the header (machine, time, folders) and the closing lines."""
    lines = stdout.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("# at start")), -1)
    end = next((i for i, l in enumerate(lines) if l.startswith("# at end")), len(lines))
    return "\n".join(lines[start + 1:end])


def every_section(top):
    out = os.path.join(top, "out")
    r = compare(top, "--quick", "--iters", "3", "--repeat", "2", "--timeout", "1", "-o", out)
    check(r.returncode == 1, "a run without figures makes the exit status 1", r)
    check(tables(r.stdout).strip("\n") == EXPECTED.strip("\n"),
          "the tables hold the fakes' figures, ratios and failures", r)
    check("# libfabric: 0.0.0-fake, mpirun (fake) 0.0" in r.stdout,
          "the header names libfabric's and the MPI's versions", r)
    # all-to-all: tcp P=4 MPI, the timeout, tcp rdma x 2 sizes x 2 modes; fi_pingpong: 3
    check(f"# 9 run(s) did not produce figures; see the .log files in {out}" in r.stdout,
          "the failed runs are counted", r)
    check(read(os.path.join(out, "fi-shm-8.json")) ==
          '{"bytes":8,"latency_us":2.000,"bandwidth_mbps":4.0000}\n',
          "fi_pingpong's figures are kept as JSON in msg-pingpong's terms")
    check(read(os.path.join(out, "alltoall-shm-p2-reuse-sendrecv-unrestricted.json")) ==
          '{"per_rank_bidir_mbps": 1500.0}\n', "the benchmark's last JSON line is kept")
    for name, status in [("alltoall-tcp-p2-reuse-rdma-restricted", "FAILED(no JSON)"),
                         ("alltoall-shm-p4-reuse-rdma-write-restricted", "TIMEOUT"),
                         ("alltoall-tcp-p4-reuse-mpi", "FAILED(exit 3)"),
                         ("fi-shm-16777216", "FAILED(server exit 1)"),
                         ("memcpy", "ok")]:
        check(read(os.path.join(out, name + ".status")) == status + "\n",
              f"{name}.status says {status}")
    check("msg-alltoall" in read(os.path.join(out, "alltoall-tcp-p2-reuse-rdma-restricted.cmd")),
          "the exact command is kept")
    # msg-pingpong's iteration counts: the latency sizes in runs of their own (quick: 20,000
    # on shm, 2,000 on tcp); 200 (quick) up to 64 KiB, then scaled, at least 20.
    check(" -I 20000 " in read(os.path.join(out, "fi-shm-8.cmd")) and
          "--iters 20000 --max 8" in read(os.path.join(out, "pingpong-shm-rdma-latency.cmd")) and
          " -I 2000 " in read(os.path.join(out, "fi-tcp-8.cmd")) and
          "--iters 2000 --max 8" in read(os.path.join(out, "pingpong-tcp-auto-latency.cmd")) and
          " -I 20 " in read(os.path.join(out, "fi-shm-1048576.cmd")),
          "fi_pingpong runs as many round trips as msg-pingpong")
    check("  pingpong-shm-sendrecv" in r.stderr and "ping-pong, tcp;ofi_rxm:" in r.stderr,
          "progress goes to stderr", r)
    check("--provider" not in read(os.path.join(out, "alltoall-shm-p2-reuse-auto-restricted.cmd"))
          and "--provider" not in read(os.path.join(out, "pingpong-shm-auto.cmd")) and
          "--provider 'tcp;ofi_rxm'" in read(os.path.join(out, "pingpong-tcp-auto.cmd")),
          "on shm libmsg runs with its defaults; on tcp the provider is named")
    # The goals, judged on the fakes' figures: cells are auto against the peer (all-to-all
    # shm 1.80 x 2, tcp P=2 0.20, tcp P=4 no figure; ping-pong 1-16 MiB shm 2.01, tcp 1.00,
    # two without figures).
    for line in [
            "NOT MET  every cell >= 1.0x its peer (median of 1): 4 of 8; below: all-to-all "
            "tcp P=2 reuse 0.20, all-to-all tcp P=4 reuse, ping-pong shm 16777216 B, "
            "ping-pong tcp 1048576 B",
            "MET      median over all cells >= 1.1x: 1.80",
            "NOT MET  sendrecv >= 0.7x Open MPI in every all-to-all cell: 2 of 4, lowest tcp "
            "P=2 reuse 0.20",
            "NOT MET  restricted >= 0.8x unrestricted in every cell: 0 of 16, lowest shm P=2 "
            "reuse auto 0.50",
            "NOT MET  P = 4 shm all-to-all against the copy limit: not run",
            "MET      8-byte latency on shm within 0.1 us of fi_pingpong: -1.75 us"]:
        check(line in r.stdout, f"the verdict line '{line}'", r)
    check(not os.path.exists(os.path.join(out, "summary.json.tmp")),
          "summary.json is published by rename, with nothing left beside it")
    doc = json.loads(read(os.path.join(out, "summary.json")))
    check(doc["verdicts"]["median_cell"] is True and doc["verdicts"]["sendrecv"] is False and
          doc["cells"]["all-to-all shm P=2 reuse"] == [1.8] and
          doc["runs"][0]["alltoall"]["alltoall-shm-p2-reuse"]["sendrecv-restricted"] == 750.0
          and round(doc["runs"][0]["pingpong"]["tcp-16777216"]["fi_pingpong"]["bandwidth_mbps"])
          == 1999, "summary.json keeps every figure and verdict")


def copy_limit(top):
    # Without --quick the buffers are also rotated, and P = 4 shm is judged against the copy
    # limit: 4 x 1800 (auto) / 2 over memcpy-bw's 2-thread 15000.5 MB/s.
    out = os.path.join(top, "out-copy")
    r = compare(top, "--only", "alltoall", "--ranks", "4", "--iters", "3", "--repeat", "2",
                "--timeout", "1", "-o", out)
    check("NOT MET  P = 4 shm all-to-all >= 0.75 of the 2-thread copy limit: 0.24 (buffers "
          "rotated, median of 1)" in r.stdout, "the copy-limit goal is judged on P = 4 shm", r)


def several_runs(top):
    out = os.path.join(top, "out-runs")
    r = compare(top, "--only", "alltoall", "--ranks", "2", "--iters", "3", "--repeat", "2",
                "-q", "--runs", "2", "-o", out)
    check(r.stdout.count("## all-to-all") == 2 and
          os.path.exists(os.path.join(out, "run-2", "alltoall-shm-p2-reuse-mpi.json")) and
          "every cell >= 1.0x its peer (median of 2): 1 of 2" in r.stdout,
          "--runs 2 runs everything twice, each into a folder, and judges the medians", r)
    doc = json.loads(read(os.path.join(out, "summary.json")))
    check(len(doc["runs"]) == 2 and doc["cells"]["all-to-all tcp P=2 reuse"] == [50.125 / 250.5] * 2,
          "summary.json holds both runs")


def not_built(top):
    os.remove(os.path.join(top, "build/libmsg/bench/mpi-alltoall"))
    out = os.path.join(top, "out-missing")
    r = compare(top, "--only", "alltoall", "--ranks", "2", "--iters", "3", "--repeat", "2",
                "-q", "-o", out)
    check(r.returncode == 1 and
          "shm    2   reuse    MISSING            1800.0 (-)         1500.0 (-)" in r.stdout and
          "# 4 run(s) did not produce figures" in r.stdout,
          "a benchmark that is not built is reported as MISSING", r)
    check(read(os.path.join(out, "alltoall-shm-p2-reuse-mpi.log")).startswith("not built: "),
          "the log of a missing benchmark says so")
    r = compare(top, "--only=memory", "-o", os.path.join(top, "out-memory"))
    check(r.returncode == 0 and "# every run produced figures" in r.stdout and
          "## all-to-all" not in r.stdout and "## ping-pong" not in r.stdout,
          "--only memory runs only the memory-copy limit", r)


def bad_options(top):
    for args, message in [(["--timeout", "0"], "--timeout: '0' is not a number of seconds"),
                          (["--iters", "x"], "--iters: 'x' is not a count"),
                          (["--repeat", "-2"], "--repeat: '-2' is not a count"),
                          (["--runs", "0"], "--runs: '0' is not a count"),
                          (["--ranks", "2 1"], "--ranks: '1' is not >= 2"),
                          (["--only", "memory,disk"], "--only: unknown section 'disk'"),
                          (["--frobnicate"], "unrecognized arguments: --frobnicate"),
                          (["--timeout"], "expected one argument")]:
        r = compare(top, *args)
        check(r.returncode == 2 and message in r.stderr, f"{args} is refused: {message}", r)
    r = subprocess.run([sys.executable, COMPARE, "--build", os.path.join(top, "nonexistent")],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "no build directory" in r.stderr,
          "a missing build directory is named", r)
    r = subprocess.run([sys.executable, COMPARE, "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and "--quick" in r.stdout and "msg-alltoall vs mpi-alltoall" in
          r.stdout, "--help describes the runs and the options", r)


with tempfile.TemporaryDirectory() as top:
    make_fakes(top, FAKES)
    every_section(top)
    several_runs(top)
    copy_limit(top)
    not_built(top)  # last to use mpi-alltoall: it removes it
    bad_options(top)

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("compare.py: all checks passed")
