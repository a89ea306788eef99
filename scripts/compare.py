#!/usr/bin/env python3
"""Runs libmsg's benchmarks beside their peers in one go and prints libmsg/peer ratios:
msg-alltoall vs Open MPI, msg-pingpong vs libfabric's fi_pingpong, and the memcpy limit.

Every run leaves NAME.cmd (the command), NAME.out, NAME.log, NAME.status (ok, TIMEOUT,
FAILED(...), MISSING) and NAME.json (the benchmark's JSON line) in --out; the tables are read
back from those files once a section's runs are done (progress goes to stderr).
Python 3 standard library only."""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from decimal import Decimal

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SECTIONS = ("memory", "alltoall", "pingpong")
# auto (libmsg's default: by message size, from the fabric's table) and each protocol forced.
PROTOCOLS = ("auto", "sendrecv", "rdma", "rdma-write")
MODES = ("unrestricted", "restricted")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
# fabric: (libmsg provider, Open MPI options for the same transport). On shm libmsg runs with
# its defaults (no provider named: its own shm transport on one host), as a user would.
ALLTOALL_FABRICS = {
    "shm": (None, []),
    "tcp": ("tcp;ofi_rxm",
            ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_include",
             "tcp;ofi_rxm"]),
}
PINGPONG_PROVIDERS = ("shm", "tcp;ofi_rxm")
FIRST_PORT = 47700  # fi_pingpong's out-of-band port; one more per run
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")

DESCRIPTION = """\
Runs, in this order and on this machine:
  memory   memcpy-bw: 1- and 2-thread copy bandwidth, the limit for one-host all-to-all;
  alltoall msg-alltoall vs mpi-alltoall at P = 2, 4, 8 (512 KiB x 50 per peer and
           direction), buffers reused and rotated through DRAM:
             shm:  libmsg's default (its shm transport) vs Open MPI default (ob1 + vader)
             tcp:  libmsg --provider "tcp;ofi_rxm"  vs Open MPI pml cm + mtl ofi "tcp;ofi_rxm"
           for the default protocol choice (auto) and each long-message protocol
           (sendrecv, rdma, rdma-write), restricted and unrestricted (one table per mode);
  pingpong msg-pingpong vs fi_pingpong (rdm endpoints, two local processes) on shm (libmsg's
           default transport against fi_pingpong -p shm) and tcp;ofi_rxm, for auto and each
           long-message protocol: small-message latency (100,000 round trips on shm,
           10,000 on tcp, for both) and 1-16 MiB bandwidth (one table each).
Ratios are libmsg speed / peer speed: above 1 libmsg is faster. A run that fails, times out
or is missing is reported as such. Raw JSON, logs and exact commands are kept in --out."""


def die(msg):
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(2)


def progress(text, end="\n"):
    sys.stdout.flush()  # the tables so far before the progress that follows them
    sys.stderr.write(text + end)
    sys.stderr.flush()


# ---- the plan: options, checked, with the quick or full defaults ----

class Plan:
    def __init__(self, args):
        self.timeout = args.timeout
        self.sections = args.only
        self.quick = args.quick
        self.ranks = args.ranks.split() or (["2", "4"] if args.quick else ["2", "4", "8"])
        self.iters = args.iters or ("20" if args.quick else "50")
        self.repeat = args.repeat or ("5" if args.quick else "15")
        if args.quick:
            self.buffers = ["reuse"]
            self.pp_iters = 200
            self.lat_iters = {"shm": 20000, "tcp;ofi_rxm": 2000}
            self.pp_sizes = [8, 1048576, 16777216]
            self.memcpy_args = ["--bytes", "128M", "--reps", "3"]
        else:
            self.buffers = ["reuse", "rotate"]
            self.pp_iters = 1000
            self.lat_iters = {"shm": 100000, "tcp;ofi_rxm": 10000}
            self.pp_sizes = [1, 8, 1048576, 2097152, 4194304, 8388608, 16777216]
            self.memcpy_args = ["--bytes", "256M", "--reps", "5"]
        self.build = build_directory(args.build)
        self.bench = os.path.join(self.build, "libmsg", "bench")
        self.msgrun = os.path.join(self.build, "libmsg", "tools", "msgrun")
        self.out = args.out or os.path.join(
            ROOT, "results", "compare-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
        self.runs = int(args.runs)

    def wants(self, section):
        return f",{section}," in f",{self.sections},"


def build_directory(build):
    """BUILD as given when it exists from here, else under the repository root."""
    if os.path.isdir(build):
        build = os.path.abspath(build)
    elif not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    if not os.path.isdir(build):
        die(f"no build directory {build} (meson setup {build} && ninja -C {build})")
    return build


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="scripts/compare.py", description=DESCRIPTION, allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-b", "--build", default="build", metavar="DIR",
                   help="meson build directory (default: build, under the repository root "
                   "unless DIR exists relative to the current directory)")
    p.add_argument("-q", "--quick", action="store_true",
                   help="P = 2 and 4, reused buffers, fewer iterations and sizes (~1 minute)")
    p.add_argument("-o", "--out", default="", metavar="DIR",
                   help="where to keep raw results (default: results/compare-<date>-<time>)")
    p.add_argument("--ranks", default="", metavar='"LIST"',
                   help='all-to-all job sizes (default "2 4 8")')
    p.add_argument("--iters", default="", metavar="N",
                   help="all-to-all issues per send and receive (default 50, quick 20)")
    p.add_argument("--repeat", default="", metavar="R",
                   help="all-to-all measurements per job; the median one is reported (default "
                   "15, quick 5): 50 x 512 KiB lasts milliseconds, one run is one sample")
    p.add_argument("--only", default=",".join(SECTIONS), metavar="LIST",
                   help="comma-separated subset of: " + ",".join(SECTIONS))
    p.add_argument("--timeout", default="120", metavar="S",
                   help="limit per run in seconds (default 120)")
    p.add_argument("--runs", default="1", metavar="N",
                   help="run everything N times, one after another (each into DIR/run-K); "
                   "the goals' verdicts take each cell's median over the runs (default 1; "
                   "the goals ask for 3)")
    args = p.parse_args(argv)
    count = re.compile(r"[1-9][0-9]*")
    if not count.fullmatch(args.timeout):
        die(f"--timeout: '{args.timeout}' is not a number of seconds")
    if args.iters and not count.fullmatch(args.iters):
        die(f"--iters: '{args.iters}' is not a count")
    if args.repeat and not count.fullmatch(args.repeat):
        die(f"--repeat: '{args.repeat}' is not a count")
    if not count.fullmatch(args.runs):
        die(f"--runs: '{args.runs}' is not a count")
    for r in args.ranks.split():
        if not count.fullmatch(r) or int(r) < 2:
            die(f"--ranks: '{r}' is not >= 2")
    for s in args.only.replace(",", " ").split():
        if s not in SECTIONS:
            die(f"--only: unknown section '{s}'")
    return args


# ---- reading the figures back: what `jq -r FILTER NAME.json | head -n 1` printed ----

def jq_number(x):
    """A number as jq 1.6 prints it: shortest round-trip digits, no ".0", exponent past 1e17."""
    if x != x:
        return "null"
    if x in (float("inf"), float("-inf")):
        x = 1.7976931348623157e308 if x > 0 else -1.7976931348623157e308
    sign = "-" if str(x).startswith("-") else ""
    if x == 0:
        return sign + "0"
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    point = len(digits) + t.exponent  # digits before the decimal point
    if point <= -4 or point > len(digits) + 15:
        e = point - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def jq_text(v):
    """A JSON value as `jq -r` prints it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return jq_number(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, indent=2)


def is_number(v):
    return NUMBER.fullmatch(v) is not None


def field(key):
    """jq .KEY"""
    return lambda doc: doc.get(key)


def result_where(key, value, want):
    """jq '.results[] | select(.KEY == VALUE) | .WANT', its first output."""
    def query(doc):
        for r in doc.get("results"):
            item = r.get(key) if r is not None else None
            if isinstance(item, float) and item == value:
                return r.get(want)
        return None
    return query


class Figures:
    """The results kept in the output folder, one NAME.status and NAME.json per run."""

    def __init__(self, out):
        self.out = out

    def path(self, name, ext):
        return os.path.join(self.out, name + ext)

    def status(self, name):
        try:
            with open(self.path(name, ".status")) as f:
                return f.read().rstrip("\n")
        except OSError:
            return "NOT-RUN"

    def document(self, name):
        """NAME.json as jq reads it; None when jq would print nothing."""
        try:
            with open(self.path(name, ".json"), "rb") as f:
                return json.loads(f.read().decode("utf-8", "replace"), parse_int=float)
        except (OSError, ValueError):
            return None

    def figure(self, name, query):
        """A number from NAME's JSON, or the reason there is none."""
        status = self.status(name)
        if status != "ok":
            return status
        doc = self.document(name)
        try:
            value = jq_text(query(doc)).split("\n")[0] if isinstance(doc, dict) else ""
        except (AttributeError, TypeError):  # jq: cannot index or iterate that
            value = ""
        return value if is_number(value) else "n/a"


def ratio_value(a, b):
    """A/B, or None when either is not a figure."""
    if is_number(a) and is_number(b) and float(b) > 0:
        return float(a) / float(b)
    return None


def ratio(a, b):
    """A/B to two decimals, or "-" when either is not a figure."""
    v = ratio_value(a, b)
    return "-" if v is None else "%.2f" % v


def cell(v, r=""):
    """ "12345.6 (0.74)" or the failure text, fixed width."""
    if is_number(v):
        x = float(v)
        v = ("%.1f" if x >= 100 else "%.3g") % x
        if r:
            v = f"{v} ({r})"
    return " %-18s" % v


# ---- running: one command under the time limit, its files in the output folder ----

def exit_status(rc):
    return 128 - rc if rc < 0 else rc  # killed by a signal: as a shell reports it


class Runner:
    def __init__(self, plan):
        self.plan = plan
        self.figures = Figures(plan.out)
        self.failures = 0

    def path(self, name, ext):
        return self.figures.path(name, ext)

    def write(self, name, ext, text):
        with open(self.path(name, ext), "w") as f:
            f.write(text)

    def execute(self, name, cmd):
        """Runs cmd: stdout to NAME.out, stderr to NAME.log, the command to NAME.cmd; returns
        and writes to NAME.status ok, TIMEOUT, FAILED(exit N) or MISSING (a program of the
        build directory that is not built)."""
        self.write(name, ".cmd", " ".join(shlex.quote(a) for a in cmd) + "\n")
        for arg in cmd:
            if arg.startswith(self.plan.build + "/") and not os.access(arg, os.X_OK):
                self.write(name, ".status", "MISSING\n")
                self.write(name, ".log", f"not built: {arg}\n")
                progress("  %-50s%s" % (name, "MISSING"))
                return "MISSING"
        progress("  %-50s" % name, end="")
        start = int(time.time())
        with open(self.path(name, ".out"), "wb") as out, open(self.path(name, ".log"), "wb") as log:
            rc = exit_status(subprocess.run(
                ["timeout", "--kill-after=5", self.plan.timeout, *cmd],
                stdout=out, stderr=log, stdin=subprocess.DEVNULL).returncode)
        if rc in (124, 137):
            status = "TIMEOUT"
        elif rc != 0:
            status = f"FAILED(exit {rc})"
        else:
            status = "ok"
        self.write(name, ".status", status + "\n")
        progress(f"{status} ({int(time.time()) - start} s)")
        return status

    def run(self, name, cmd):
        """Executes a benchmark that prints one JSON object; NAME.json holds its last line
        that starts with '{'."""
        status = self.execute(name, cmd)
        try:
            with open(self.path(name, ".out"), "rb") as f:
                lines = [l for l in f.read().split(b"\n") if l.startswith(b"{")]
        except OSError:
            lines = []
        with open(self.path(name, ".json"), "wb") as f:
            f.write(lines[-1] + b"\n" if lines else b"")
        if status == "ok" and not isinstance(self.figures.document(name), dict):
            status = "FAILED(no JSON)"
            self.write(name, ".status", status + "\n")
        if status != "ok":
            self.failures += 1

    def fi_pingpong(self, name, provider, nbytes, iters, port):
        """libfabric's own ping-pong, server and client as two local processes; NAME.json gets
        the client's one-way time in msg-pingpong's terms."""
        args = ["-p", provider, "-e", "rdm", "-I", str(iters), "-S", str(nbytes)]
        if shutil.which("fi_pingpong") is None:
            self.write(name, ".status", "MISSING\n")
            self.failures += 1
            return
        with open(self.path(name, "-server.out"), "wb") as server_out:
            server = subprocess.Popen(
                ["timeout", "--kill-after=5", self.plan.timeout, "fi_pingpong", *args,
                 "-B", str(port)], stdout=server_out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if listening(port):
                    break
                time.sleep(0.05)
            status = self.execute(name, ["fi_pingpong", *args, "-P", str(port), "127.0.0.1"])
            # A client that failed leaves its server waiting; it is ours to end.
            if status != "ok":
                server.terminate()
            server_rc = exit_status(server.wait())
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        usec = fi_pingpong_usec(self.path(name, ".out"))
        if status == "ok" and server_rc != 0:
            status = f"FAILED(server exit {server_rc})"
        elif status == "ok" and not is_number(usec):
            status = "FAILED(no figures)"
        if status == "ok":
            u = float(usec)
            self.write(name, ".json", "" if u == 0 else
                       '{"bytes":%d,"latency_us":%.3f,"bandwidth_mbps":%.4f}\n'
                       % (nbytes, u, nbytes / u))
        else:
            self.failures += 1
        self.write(name, ".status", status + "\n")


def listening(port):
    try:
        r = subprocess.run(["ss", "-ltn", f"sport = :{port}"], capture_output=True)
    except OSError:
        return False
    return b"LISTEN" in r.stdout


def fi_pingpong_usec(path):
    """usec/xfer from fi_pingpong's last figures line:
    bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec."""
    usec = ""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return usec
    for line in text.split("\n"):
        words = line.split()
        if len(words) >= 8 and words[0] != "bytes":
            usec = words[6]
    return usec


def pingpong_iters(nbytes, iters):
    """msg-pingpong's own per-size count: the full count up to 64 KiB, then scaled down."""
    if nbytes <= 65536:
        return iters
    return max(int(iters * 65536 / nbytes), min(iters, 20))


# Latency sizes (up to 8 bytes) are measured in runs of their own, with many more round trips
# on both sides: over a thousand, a ping-pong's start (caches, the CPUs' clocks, the first
# polls) weighs in its mean, and fi_pingpong has no warm-up to exclude it.
LATENCY_MAX = 8


def pingpong_name(tag, protocol, nbytes):
    """The msg-pingpong run that holds the figure for NBYTES."""
    return f"pingpong-{tag}-{protocol}" + ("-latency" if nbytes <= LATENCY_MAX else "")


# ---- the sections: their runs, then their tables ----

def memory_runs(plan, runner):
    progress("memory-copy limit:")
    runner.run("memcpy", [os.path.join(plan.bench, "memcpy-bw"), "--json", "--threads", "1,2",
                          *plan.memcpy_args])


def memory_limit(figures):
    """MB/s copied by 1 and by 2 threads."""
    return (figures.figure("memcpy", result_where("threads", 1, "best_mbps")),
            figures.figure("memcpy", result_where("threads", 2, "best_mbps")))


def memory_table(figures):
    copy1, copy2 = memory_limit(figures)
    doc = figures.document("memcpy")
    if isinstance(doc, dict):  # jq '.buffer_bytes // "?"'
        value = doc.get("buffer_bytes")
        buffer_bytes = "?" if value is None or value is False else jq_text(value)
    else:
        buffer_bytes = ""
    return ["",
            f"## memory-copy limit (memcpy-bw, {buffer_bytes} B buffers, best of reps)",
            "%-10s%s" % ("threads", "MB/s copied"),
            "%-10s%s" % (1, copy1),
            "%-10s%s" % (2, copy2)]


def alltoall_jobs(plan):
    """(fabric, P, buffers, name prefix) of every all-to-all job, in the order they run."""
    for fabric in ALLTOALL_FABRICS:
        for p in plan.ranks:
            for buffers in plan.buffers:
                yield fabric, p, buffers, f"alltoall-{fabric}-p{p}-{buffers}"


def alltoall_runs(plan, runner):
    for fabric, p, buffers, base in alltoall_jobs(plan):
        provider, mpi_args = ALLTOALL_FABRICS[fabric]
        extra = ["--rotate"] if buffers == "rotate" else []
        progress(f"all-to-all, {fabric}, P={p}, buffers {buffers}:")
        runner.run(f"{base}-mpi", [*MPIRUN, "-np", p, *mpi_args,
                                   os.path.join(plan.bench, "mpi-alltoall"), "--json",
                                   "--iters", plan.iters, "--repeat", plan.repeat, *extra])
        for mode in MODES:
            for protocol in PROTOCOLS:
                runner.run(f"{base}-{protocol}-{mode}",
                           [plan.msgrun, "-n", p, os.path.join(plan.bench, "msg-alltoall"),
                            "--json", "--iters", plan.iters, "--repeat", plan.repeat,
                            *provider_args(provider), "--protocol", protocol, f"--{mode}",
                            *extra])


def alltoall_tables(plan, figures, copy):
    bidir = field("per_rank_bidir_mbps")
    rows = {mode: [] for mode in MODES}
    for fabric, p, buffers, base in alltoall_jobs(plan):
        mpi = figures.figure(f"{base}-mpi", bidir)
        for mode in MODES:
            row = "%-7s%-4s%-8s" % (fabric, p, buffers) + cell(mpi)
            for protocol in PROTOCOLS:
                v = figures.figure(f"{base}-{protocol}-{mode}", bidir)
                row += cell(v, ratio(v, mpi))
            rows[mode].append(row)
    lines = ["",
             f"## all-to-all (msg-alltoall vs mpi-alltoall): 512 KiB x {plan.iters} to and "
             "from every peer",
             "# per-rank bidirectional MB/s (sent + received) / elapsed, mean over ranks, "
             f"median of {plan.repeat} measurements in one job; (ratio vs MPI)",
             f"# memory-copy limit beside it: {copy[0]} MB/s (1 thread), {copy[1]} MB/s "
             "(2 threads)"]
    for mode in MODES:
        lines.append(f"# libmsg {mode}")
        lines.append("%-7s%-4s%-8s" % ("fabric", "P", "buffers") +
                     "".join(" %-18s" % h for h in ("MPI", *PROTOCOLS)))
        lines += rows[mode]
    return lines


def provider_tag(provider):
    return provider.split(";")[0]


def provider_args(provider):
    """libmsg's options for a libfabric provider; none for "shm", where libmsg's default on one
    host (its own shm transport) is what a user gets and what is compared."""
    return [] if provider in (None, "shm") else ["--provider", provider]


def pingpong_runs(plan, runner):
    port = FIRST_PORT
    for provider in PINGPONG_PROVIDERS:
        tag = provider_tag(provider)
        progress(f"ping-pong, {provider}:")
        lat_iters = plan.lat_iters[provider]
        for protocol in PROTOCOLS:
            command = [plan.msgrun, "-n", "2", os.path.join(plan.bench, "msg-pingpong"),
                       "--json", *provider_args(provider), "--protocol", protocol]
            runner.run(f"pingpong-{tag}-{protocol}-latency",
                       [*command, "--iters", str(lat_iters), "--max", str(LATENCY_MAX)])
            runner.run(f"pingpong-{tag}-{protocol}",
                       [*command, "--iters", str(plan.pp_iters), "--max", "16M"])
        for nbytes in plan.pp_sizes:
            port += 1
            iters = (lat_iters if nbytes <= LATENCY_MAX
                     else pingpong_iters(nbytes, plan.pp_iters))
            runner.fi_pingpong(f"fi-{tag}-{nbytes}", provider, nbytes, iters, port)


def pingpong_tables(plan, figures):
    lat_rows, bw_rows = [], []
    for provider in PINGPONG_PROVIDERS:
        tag = provider_tag(provider)
        for nbytes in plan.pp_sizes:
            fi_lat = figures.figure(f"fi-{tag}-{nbytes}", field("latency_us"))
            fi_bw = figures.figure(f"fi-{tag}-{nbytes}", field("bandwidth_mbps"))
            lat_row = "%-13s%-10s" % (provider, nbytes) + cell(fi_lat)
            bw_row = "%-13s%-10s" % (provider, nbytes) + cell(fi_bw)
            for protocol in PROTOCOLS:
                name = pingpong_name(tag, protocol, nbytes)
                lat = figures.figure(name, result_where("bytes", nbytes, "latency_us"))
                bw = figures.figure(name, result_where("bytes", nbytes, "bandwidth_mbps"))
                lat_row += cell(lat, ratio(fi_lat, lat))
                bw_row += cell(bw, ratio(bw, fi_bw))
            lat_rows.append(lat_row)
            bw_rows.append(bw_row)
    heading = "%-13s%-10s" % ("provider", "bytes") + "".join(
        " %-18s" % h for h in ("fi_pingpong", *PROTOCOLS))
    return ["",
            "## ping-pong (msg-pingpong vs fi_pingpong, rdm, two local processes)",
            "# one-way latency us (round trip / 2); (ratio vs fi_pingpong, above 1: libmsg "
            "faster)",
            heading, *lat_rows,
            "# bandwidth MB/s (bytes / one-way time); (ratio vs fi_pingpong)",
            heading, *bw_rows]


# ---- the goals: one verdict line each, over the runs' medians ----

GOAL_CELL, GOAL_MEDIAN, GOAL_FLOOR = 1.0, 1.1, 0.9
GOAL_SENDRECV, GOAL_RESTRICTED, GOAL_COPY, GOAL_LATENCY_US = 0.7, 0.8, 0.75, 0.1


def number(v):
    return float(v) if is_number(v) else None


def median_of(values):
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def cell_ratios(plan, runs):
    """Every compared cell with libmsg's default protocol (auto, unrestricted): name -> its
    ratio in each run (None where a run has no figure). All-to-all against MPI, ping-pong
    bandwidth at 1-16 MiB against fi_pingpong."""
    cells = {}
    bidir = field("per_rank_bidir_mbps")
    if plan.wants("alltoall"):
        for fabric, p, buffers, base in alltoall_jobs(plan):
            cells[f"all-to-all {fabric} P={p} {buffers}"] = [
                ratio_value(f.figure(f"{base}-auto-unrestricted", bidir),
                            f.figure(f"{base}-mpi", bidir)) for f in runs]
    if plan.wants("pingpong"):
        for provider in PINGPONG_PROVIDERS:
            tag = provider_tag(provider)
            for nbytes in plan.pp_sizes:
                if nbytes < 1 << 20:
                    continue
                query = result_where("bytes", nbytes, "bandwidth_mbps")
                cells[f"ping-pong {tag} {nbytes} B"] = [
                    ratio_value(f.figure(f"pingpong-{tag}-auto", query),
                                f.figure(f"fi-{tag}-{nbytes}", field("bandwidth_mbps")))
                    for f in runs]
    return cells


def alltoall_pairs(plan, runs, mine, theirs):
    """name -> median over runs of figure `mine` / figure `theirs` for every all-to-all cell
    and protocol (mine, theirs: functions of (base, protocol) giving run names)."""
    bidir = field("per_rank_bidir_mbps")
    out = {}
    for fabric, p, buffers, base in alltoall_jobs(plan):
        for protocol in PROTOCOLS:
            a, b = mine(base, protocol), theirs(base, protocol)
            if a is None:
                continue
            out[f"{fabric} P={p} {buffers} {protocol}"] = median_of(
                [ratio_value(f.figure(a, bidir), f.figure(b, bidir)) for f in runs])
    return out


def worst(pairs):
    got = {k: v for k, v in pairs.items() if v is not None}
    if not got:
        return None, None
    k = min(got, key=got.get)
    return k, got[k]


def every_pair(pairs, goal, text):
    """The verdict that every ratio of `pairs` (name -> median ratio) reaches `goal`: how many
    do, and the lowest."""
    name, low = worst(pairs)
    under = [k for k, v in pairs.items() if v is None or v < goal]
    return verdict(not under and low is not None,
                   f"{text}: {len(pairs) - len(under)} of {len(pairs)}"
                   + (f", lowest {name} {low:.2f}" if low is not None else ""))


def verdict(met, text):
    return {"met": met, "line": f"{'MET    ' if met else 'NOT MET'}  {text}"}


def goal_verdicts(plan, runs, copy):
    """The goals of libmsg against its peers (docs/libmsg.md, Against its peers), each judged
    on the medians over `runs`; a goal without figures is not met."""
    out = {}
    cells = cell_ratios(plan, runs)
    medians = {k: median_of(v) for k, v in cells.items()}
    if cells:
        under = sorted(k for k, v in medians.items() if v is None or v < GOAL_CELL)
        out["cells_ahead"] = verdict(
            not under, f"every cell >= {GOAL_CELL}x its peer (median of {len(runs)}): "
            f"{len(cells) - len(under)} of {len(cells)}" + (
                f"; below: " + ", ".join(f"{k} {medians[k]:.2f}" if medians[k] else k
                                         for k in under) if under else ""))
        overall = median_of(list(medians.values()))
        out["median_cell"] = verdict(
            overall is not None and overall >= GOAL_MEDIAN,
            f"median over all cells >= {GOAL_MEDIAN}x: "
            f"{'none' if overall is None else f'{overall:.2f}'}")
        low = sorted({k for k, v in cells.items() for r in v if r is None or r < GOAL_FLOOR})
        out["no_cell_below"] = verdict(
            not low, f"no cell below {GOAL_FLOOR}x in any run: " +
            (", ".join(f"{k} (lowest {min(r for r in cells[k] if r is not None):.2f})"
                       if any(r is not None for r in cells[k]) else k for k in low)
             if low else "none below"))
    if plan.wants("alltoall"):
        sendrecv = alltoall_pairs(plan, runs,
                                  lambda b, p: f"{b}-sendrecv-unrestricted" if p == "auto"
                                  else None, lambda b, p: f"{b}-mpi")
        out["sendrecv"] = every_pair(
            {k.rsplit(" ", 1)[0]: v for k, v in sendrecv.items()}, GOAL_SENDRECV,
            f"sendrecv >= {GOAL_SENDRECV}x Open MPI in every all-to-all cell")
        restricted = alltoall_pairs(plan, runs, lambda b, p: f"{b}-{p}-restricted",
                                    lambda b, p: f"{b}-{p}-unrestricted")
        out["restricted"] = every_pair(
            restricted, GOAL_RESTRICTED,
            f"restricted >= {GOAL_RESTRICTED}x unrestricted in every cell")
        out["copy_limit"] = copy_verdict(plan, runs, copy)
    if plan.wants("pingpong") and 8 in plan.pp_sizes:
        gaps = [None if a is None or b is None else a - b for a, b in (
            (number(f.figure("pingpong-shm-auto-latency",
                             result_where("bytes", 8, "latency_us"))),
             number(f.figure("fi-shm-8", field("latency_us")))) for f in runs)]
        gap = median_of(gaps)
        out["latency"] = verdict(
            gap is not None and gap <= GOAL_LATENCY_US,
            f"8-byte latency on shm within {GOAL_LATENCY_US} us of fi_pingpong: "
            f"{'no figures' if gap is None else f'{gap:+.2f} us'} (libmsg - fi_pingpong, "
            f"median of {len(runs)})")
    return out


def copy_verdict(plan, runs, copy):
    """P = 4 shm all-to-all (auto, unrestricted, buffers rotated through DRAM as memcpy-bw's
    are) moves P x per-rank bidirectional / 2 bytes per second: against the 2-thread copy
    limit of the same run."""
    if "4" not in plan.ranks or "rotate" not in plan.buffers:
        return verdict(False, "P = 4 shm all-to-all against the copy limit: not run "
                       "(needs P = 4 and rotated buffers)")
    fractions = []
    for f, limit in zip(runs, copy):
        moved = number(f.figure("alltoall-shm-p4-rotate-auto-unrestricted",
                                field("per_rank_bidir_mbps")))
        fractions.append(None if moved is None or number(limit) is None
                         else 4 * moved / 2 / number(limit))
    frac = median_of(fractions)
    return verdict(frac is not None and frac >= GOAL_COPY,
                   f"P = 4 shm all-to-all >= {GOAL_COPY} of the 2-thread copy limit: "
                   f"{'no figures' if frac is None else f'{frac:.2f}'} (buffers rotated, "
                   f"median of {len(runs)})")


def summary(plan, runs, copy, verdicts):
    """Every figure the tables showed, per run, and the verdicts: summary.json in --out."""
    doc = {"runs": [], "verdicts": {k: v["met"] for k, v in verdicts.items()},
           "verdict_lines": [v["line"] for v in verdicts.values()],
           "cells": cell_ratios(plan, runs)}
    for f, limit in zip(runs, copy):
        run = {"out": f.out, "copy_limit_mbps": number(limit), "alltoall": {}, "pingpong": {}}
        bidir = field("per_rank_bidir_mbps")
        if plan.wants("alltoall"):
            for fabric, p, buffers, base in alltoall_jobs(plan):
                row = {"mpi": number(f.figure(f"{base}-mpi", bidir))}
                for mode in MODES:
                    for protocol in PROTOCOLS:
                        row[f"{protocol}-{mode}"] = number(
                            f.figure(f"{base}-{protocol}-{mode}", bidir))
                run["alltoall"][base] = row
        if plan.wants("pingpong"):
            for provider in PINGPONG_PROVIDERS:
                tag = provider_tag(provider)
                for nbytes in plan.pp_sizes:
                    row = {"fi_pingpong": {
                        k: number(f.figure(f"fi-{tag}-{nbytes}", field(k)))
                        for k in ("latency_us", "bandwidth_mbps")}}
                    for protocol in PROTOCOLS:
                        row[protocol] = {k: number(f.figure(
                            pingpong_name(tag, protocol, nbytes),
                            result_where("bytes", nbytes, k)))
                            for k in ("latency_us", "bandwidth_mbps")}
                    run["pingpong"][f"{tag}-{nbytes}"] = row
        doc["runs"].append(run)
    return doc


def publish_json(path, doc):
    """Writes doc to path whole or not at all: into a new file beside it (never through a
    symlink, under the umask), synced, renamed over path, the directory synced."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dirfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


# ---- the machine ----

def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace").stdout
    except OSError:
        return ""


def versions():
    """libfabric's and the MPI's version lines."""
    fabric = "\n".join(re.sub(" +", " ", l) for l in command_output(["fi_info", "--version"])
                       .splitlines() if l.startswith("libfabric:"))
    mpi = (command_output(["mpirun", "--version"]).splitlines() or [""])[0]
    return f"{fabric}, {mpi}"


def machine_load():
    """Busy-polling peers (fi_pingpong, Open MPI) collapse when other work shares the cores;
    the load and CPU pressure printed at both ends say how far to trust a run."""
    try:
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split(" ")[:3])
    except OSError:
        load = ""
    pressure = ""
    try:
        with open("/proc/pressure/cpu") as f:
            for line in f:
                words = line.split()
                if line.startswith("some") and len(words) > 1:
                    pressure += words[1].replace("avg10=", "", 1) + "%"
    except OSError:
        pass
    return f"load average {load}, CPU pressure (10 s) {pressure or 'n/a'}"


def header(plan):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    uname = os.uname()
    return [f"# compare.py {now}, {len(os.sched_getaffinity(0))} CPUs, "
            f"{uname.sysname} {uname.release}",
            f"# build {plan.build}; raw results in {plan.out}",
            f"# {versions()}",
            "# MB = 10^6 bytes; ratio = libmsg speed / peer speed (above 1: libmsg faster)",
            f"# at start: {machine_load()} (other work on the machine skews every figure)"]


def show(lines):
    print("\n".join(lines), flush=True)


def run_once(plan):
    """Every section once into plan.out, its tables printed; (figures, 2-thread copy limit,
    failures)."""
    try:
        os.makedirs(plan.out, exist_ok=True)
    except OSError as e:
        die(f"cannot create {plan.out} ({e.strerror})")
    runner = Runner(plan)
    figures = runner.figures
    show(header(plan))
    copy = ("-", "-")
    if plan.wants("memory") or plan.wants("alltoall"):
        memory_runs(plan, runner)
        copy = memory_limit(figures)
        show(memory_table(figures))
    if plan.wants("alltoall"):
        alltoall_runs(plan, runner)
        show(alltoall_tables(plan, figures, copy))
    if plan.wants("pingpong"):
        pingpong_runs(plan, runner)
        show(pingpong_tables(plan, figures))
    show(["", f"# at end: {machine_load()}"])
    return figures, copy[1], runner.failures


def main(argv=None):
    plan = Plan(parse_args(argv))
    top = plan.out
    runs, copies, failures = [], [], 0
    for k in range(plan.runs):
        if plan.runs > 1:
            plan.out = os.path.join(top, f"run-{k + 1}")
            show(["", f"# ==== run {k + 1} of {plan.runs} ===="])
        figures, copy, failed = run_once(plan)
        runs.append(figures)
        copies.append(copy)
        failures += failed
    plan.out = top
    verdicts = goal_verdicts(plan, runs, copies)
    show(["", f"## goals (docs/libmsg.md, Against its peers; medians of {plan.runs} run(s))",
          *[v["line"] for v in verdicts.values()]])
    publish_json(os.path.join(top, "summary.json"), summary(plan, runs, copies, verdicts))
    show([f"# every figure and verdict: {os.path.join(top, 'summary.json')}"])
    if failures:
        show([f"# {failures} run(s) did not produce figures; see the .log files in {top}"])
        return 1
    show(["# every run produced figures"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
