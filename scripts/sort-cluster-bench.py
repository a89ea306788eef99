#!/usr/bin/env python3
"""The distributed sort's algorithms side by side on this machine (docs/sortapp-cluster.md).

Generates N input partitions of --size bytes each (default 4 nodes x 1 GiB of 100-byte
records; --reuse keeps them for the next run), measures the disk holding --dir (sequential
O_DIRECT writes of one partition's size and reads of the inputs, one dd per node, all at
once, as the nodes use it), then sorts the same partitions with
`sortapp run`: three-phase, river in one pass (--passes 1) and river in two passes
(--passes 2, with --memory M when --two-pass-memory M is given). Before each sort the page
cache is dropped (when root). For each: wall seconds, the report's per-phase actual/expected
ratios (median over nodes), the bytes the disk read and wrote (/sys/dev/block/.../stat,
before and after), the physical limit (those bytes at the measured rates) and the sort's
time over it, the balance, the CPU-seconds per GB sorted and the start-up (sortapp run's
start to the first work order) from the report, and sortcheck's verdict; then node 0's
partition sorted on one node by `sortapp local` and by STXXL's stxxl::sort with the same
memory (--local-memory), each with its limit; then the speedups. A failed check fails the script. Figures, not pass/fail on speed.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOOL = "sort-cluster-bench"
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RECORD = 100  # bytes per record (sortgen's and sortapp's default format)
SECTOR = 512  # /sys/block/*/stat counts 512-byte sectors whatever the device's own size
RUNS = [  # (key, label, sortapp run options)
    ("three-phase", "three-phase", ["--algorithm", "three-phase"]),
    ("river-1-pass", "river one pass", ["--algorithm", "river", "--passes", "1"]),
    ("river-2-pass", "river two passes", ["--algorithm", "river", "--passes", "2"]),
]


class Failure(Exception):
    """A named reason to stop; the script exits 1 with it after cleaning up."""


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMGT]?)(I?B)?", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size like 16K, 32M or 1G")
    return int(m.group(1)) << (10 * " KMGT".index(m.group(2) or " "))


def human(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f}{unit}"
    return f"{n}B"


def run(cmd, env=None, what=None):
    """Runs cmd; its stdout, or a Failure naming it with the end of its stderr. Interrupted,
    it ends cmd with SIGTERM (sortapp run then removes what its job made) before going on."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = p.communicate()
    except BaseException:
        p.terminate()
        try:
            p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        raise
    if p.returncode != 0:
        raise Failure(f"{what or cmd[0]} failed (exit {p.returncode}): {err.strip()[-800:]}")
    return out


# ---- the disk holding the data directory --------------------------------------------------

def block_device(path):
    """(name, /sys stat file) of the block device holding path, or (None, None)."""
    dev = os.stat(path).st_dev
    stat = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat"
    if os.major(dev) == 0:  # btrfs, overlay, ...: the mount's source, if it is a device
        stat = None
        # mounts() lists the longest mount point first: the first that holds path is its own.
        mount = next((m for m in mounts() if (path + "/").startswith(m[0].rstrip("/") + "/")),
                     None)
        if mount and mount[1].startswith("/dev/") and os.path.exists(mount[1]):
            rdev = os.stat(mount[1]).st_rdev
            stat = f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat"
    if not stat or not os.path.exists(stat):
        return None, None
    return os.path.basename(os.path.realpath(os.path.dirname(stat))), stat


def mounts():
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            out.append((left.split()[4], right.split()[1]))
    return sorted(out, key=lambda m: -len(m[0]))


def sectors(stat):
    """Bytes read and written so far by the device (fields 3 and 7 of its stat)."""
    if stat is None:
        return None
    with open(stat) as f:
        v = f.read().split()
    return int(v[2]) * SECTOR, int(v[6]) * SECTOR


def drop_caches(state):
    """Writes dirty pages back and empties the page cache; says once when it cannot."""
    os.sync()
    if not state["drop"]:
        return
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        state["drop"], state["why_not"] = False, "it could not be"
        why = e.strerror + ("" if os.geteuid() == 0 else ", not root")
        print(f"{TOOL}: cannot drop the page cache ({why}); going on with it warm",
              file=sys.stderr)


def dd_rate(cmds, nbytes):
    """MB/s of the dd commands run all at once, each moving nbytes; None if one failed."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for c in cmds]
    codes = [p.wait() for p in procs]  # every one, even after one failed
    ok = all(c == 0 for c in codes)
    return (len(cmds) * nbytes / (time.monotonic() - t0) / 1e6) if ok else None


def measure_disk(d, partitions, nbytes, state):
    """Sequential write and read rates (MB/s) of the disk the way the sort's nodes use it: one
    file of a partition's size per node, all nodes at once (the read reads the inputs), each
    in 4 MiB O_DIRECT requests when the file system allows it (else buffered with fdatasync,
    and said so)."""
    # Whole 4 KiB-aligned requests (O_DIRECT wants them) covering the partition.
    bs = min(4 << 20, -(-nbytes // 4096) * 4096)
    count = -(-nbytes // bs)
    probes = [os.path.join(d, f".sort-cluster-bench-probe.{i}") for i in range(len(partitions))]
    write = [["dd", "if=/dev/zero", f"of={p}", f"bs={bs}", f"count={count}", "status=none"]
             for p in probes]
    read = [["dd", f"if={p}", "of=/dev/null", f"bs={bs}", "status=none"] for p in partitions]
    try:
        drop_caches(state)
        w = dd_rate([c + ["oflag=direct", "conv=fsync"] for c in write], bs * count)
        direct = w is not None
        if not direct:
            w = dd_rate([c + ["conv=fdatasync"] for c in write], bs * count)
    finally:
        for p in probes:
            if os.path.exists(p):
                os.remove(p)
    drop_caches(state)
    r = dd_rate([c + (["iflag=direct"] if direct else []) for c in read],
                os.path.getsize(partitions[0]))
    if not w or not r:
        raise Failure(f"measuring the disk of {d} with dd failed")
    return {"write_mb_s": w, "read_mb_s": r, "bytes": bs * count, "streams": len(partitions),
            "direct": direct, "request_bytes": bs}


FRESH_PROBE = r"""
import mmap, sys, time
n, huge = int(sys.argv[1]), sys.argv[2] == "huge"
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # shared memory gets no THP
if huge and hasattr(mmap, "MADV_HUGEPAGE"):
    m.madvise(mmap.MADV_HUGEPAGE)
t0 = time.monotonic()
for i in range(0, n, 4096):
    m[i] = 1
print(n / (time.monotonic() - t0) / 1e9)
"""


def fresh_memory_rate(nbytes, state, pages):
    """GB/s at which a new process gets memory it has not touched before, in ordinary pages
    (as a one-pass sort's single run buffer is) or with huge pages advised (as buffers filled
    many times are): one byte written per 4 KiB page, from a dropped page cache, as each sort
    starts. The kernel zeroes every such page on first touch, and a virtual machine's host
    may have to back it again, so this bounds how fast any process of the sort can take on
    its footprint."""
    drop_caches(state)
    out = subprocess.run([sys.executable, "-c", FRESH_PROBE, str(nbytes), pages],
                         capture_output=True, text=True, check=False)
    try:
        return float(out.stdout.strip())
    except ValueError:
        raise Failure(f"measuring the fresh-memory rate failed: {out.stderr.strip()[-300:]}")


# ---- inputs -------------------------------------------------------------------------------

class Inputs:
    """The partitions in DIR: made here (and removed after, unless --reuse) or reused."""

    def __init__(self, args, tools):
        self.args, self.tools = args, tools
        self.made = self.complete = False
        self.records = args.size // RECORD
        self.paths = [os.path.join(args.dir, f"in.{i}") for i in range(args.nodes)]
        self.manifest = os.path.join(args.dir, "inputs.json")
        self.want = {"nodes": args.nodes, "records_per_node": self.records,
                     "record_size": RECORD, "distribution": args.distribution}

    def present(self):
        return [p for p in self.paths + [self.manifest] if os.path.lexists(p)]

    def reusable(self):
        """The checksum of inputs an earlier --reuse run left, or None if there are none."""
        if not self.present():
            return None
        try:
            with open(self.manifest) as f:
                have = json.load(f)
        except (OSError, ValueError):
            raise Failure(f"{self.args.dir} holds in.* files but no readable inputs.json "
                          "(not made by this script); remove them or choose another --dir")
        sizes_ok = all(os.path.isfile(p) and os.path.getsize(p) == self.records * RECORD
                       for p in self.paths)
        if {k: have.get(k) for k in self.want} != self.want or not sizes_ok:
            raise Failure(f"the inputs in {self.args.dir} are not {self.args.nodes} x "
                          f"{self.records} records ({self.args.distribution}): inputs.json "
                          f"says {have}; remove them or choose another --dir")
        return have["checksum"]

    def generate(self):
        self.made = True
        out = run([self.tools["sortgen"], "--json", "--partitions", str(self.args.nodes),
                   "--distribution", self.args.distribution,
                   str(self.records * self.args.nodes), os.path.join(self.args.dir, "in")],
                  what="sortgen")
        checksum = json.loads(out.splitlines()[0])["checksum"]
        if self.args.reuse:
            with open(self.manifest + ".tmp", "w") as f:
                json.dump(dict(self.want, checksum=checksum), f)
            os.replace(self.manifest + ".tmp", self.manifest)
        self.complete = True
        return checksum

    def remove(self):
        """Removes what this run made, unless --reuse keeps it (whole) for the next run."""
        if self.made and not (self.args.reuse and self.complete):
            for p in self.paths + [self.manifest, self.manifest + ".tmp"]:
                if os.path.lexists(p):
                    os.remove(p)


def check_space(args, reuse_existing):
    """Refuses, before writing anything, when the disk cannot hold inputs, outputs and work."""
    total = args.nodes * (args.size // RECORD) * RECORD
    # Work: three-phase's runs and merged work file can coexist during the local merge.
    need = {"inputs": 0 if reuse_existing else total, "outputs": total, "work": 2 * total}
    st = os.statvfs(args.dir)
    free = st.f_bavail * st.f_frsize
    if free < sum(need.values()):
        parts = " + ".join(f"{k} {human(v)}" for k, v in need.items())
        raise Failure(f"not enough free space in {args.dir}: {human(free)} free, "
                      f"{human(sum(need.values()))} needed ({parts}); free some space, "
                      "use a smaller --size or another --dir")
    return need, free


# ---- one sort -----------------------------------------------------------------------------

def phase_ratios(report):
    """Per phase (in the report's order), the median over nodes of actual/expected."""
    by_phase = {}
    for node in report.get("per_node", []):
        for p in node["phases"]:
            ratios = by_phase.setdefault(p["phase"], [])
            if p.get("expected_seconds", 0) > 0:
                ratios.append(p["seconds"] / p["expected_seconds"])
    return {k: (statistics.median(v) if v else None) for k, v in by_phase.items()}


def disk_limit(before, after, disk):
    """The bytes the device moved between two samples, and the seconds they take at the
    measured rates (None, None, None without /sys statistics)."""
    if before is None:
        return None, None, None
    rd, wr = after[0] - before[0], after[1] - before[1]
    return rd, wr, rd / (disk["read_mb_s"] * 1e6) + wr / (disk["write_mb_s"] * 1e6)


def timed(cmd, ctx, what, env=None):
    """Runs cmd from a dropped page cache; (stdout, wall seconds, disk bytes and limit)."""
    drop_caches(ctx["state"])
    before = sectors(ctx["stat"])
    t0 = time.monotonic()
    out = run(cmd, env=env or ctx["env"], what=what)
    wall = time.monotonic() - t0
    os.sync()  # what the command left dirty in the page cache is its disk traffic too
    return out, wall, disk_limit(before, sectors(ctx["stat"]), ctx["disk"])


def validate(paths, checksum, tools, what, records=None):
    """sortcheck of the outputs in order, against the input's checksum (and record count)."""
    expect = ["--expect-records", str(records)] if records is not None else []
    check = subprocess.run([tools["sortcheck"], "--expect-checksum", checksum] + expect + paths,
                           capture_output=True, text=True)
    if check.returncode != 0:
        raise Failure(f"{what}'s output did not validate: "
                      f"{(check.stdout + check.stderr).strip()[-800:]}")


def sort_once(key, options, ctx):
    args, tools = ctx["args"], ctx["tools"]
    work = tempfile.mkdtemp(prefix=f".sort-cluster-bench-{key}-", dir=args.dir)
    try:
        outs = [os.path.join(work, f"out.{i}") for i in range(args.nodes)]
        cmd = [tools["sortapp"], "run", "-n", str(args.nodes),
               "--input", os.path.join(args.dir, "in.{rank}"),
               "--output", os.path.join(work, "out.{rank}"), "--json"] + options + args.sortapp_args
        out, wall, moved = timed(cmd, ctx, f"the {key} sort")
        report = json.loads(out.strip().splitlines()[-1])
        validate(outs, ctx["checksum"], tools, f"the {key} sort", ctx["records"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures(key, cmd, wall, report, moved, ctx["fresh_gb_s"])


def figures(key, cmd, wall, report, moved, fresh_gb_s=None):
    r = {"key": key, "command": " ".join(cmd[1:]), "wall_seconds": wall,
         "sort_seconds": report["seconds"], "algorithm": report.get("algorithm"),
         "balance": report.get("balance"), "partition_records": report.get("partition_records"),
         "one_pass_nodes": report.get("one_pass_nodes"), "phase_ratios": phase_ratios(report),
         "sortcheck": "ok", "disk_bytes_read": None, "disk_bytes_written": None,
         "physical_limit_seconds": None, "over_limit": None, "sort_over_limit": None,
         # User + system CPU-seconds per GB of input, every process of the job; and the
         # seconds from sortapp run's start to the first work order (the report's).
         "cpu_seconds_per_gb": report.get("cpu_seconds_per_gb", {}).get("total"),
         "startup_seconds": report.get("startup", {}).get("first_order_s"),
         # The nodes' peak resident memory in all, and the CPU-seconds the kernel needs to
         # hand out that much fresh memory at the rate measured in this run.
         "peak_rss_bytes": report.get("peak_rss_bytes", {}).get("total"),
         "fresh_memory_cpu_seconds": None}
    if r["peak_rss_bytes"] and fresh_gb_s:
        r["fresh_memory_cpu_seconds"] = r["peak_rss_bytes"] / 1e9 / fresh_gb_s
    rd, wr, limit = moved
    if limit is not None:
        r["disk_bytes_read"], r["disk_bytes_written"] = rd, wr
        r["physical_limit_seconds"] = limit
        r["over_limit"] = wall / limit if limit > 0 else None
        r["sort_over_limit"] = r["sort_seconds"] / limit if limit > 0 else None
    return r


# ---- one node: sortapp local against STXXL ----------------------------------------------

def one_node(ctx, partition):
    """Node 0's partition sorted on one node with --local-memory (default a quarter of it, at
    least 8 MiB, which STXXL needs): `sortapp local`, then stxxl::sort (sortapp/bench/
    stxxl_sort.cpp, built where libstxxl-dev is) on a copy made before its clock starts. Each
    sorts from a dropped page cache; wall seconds, disk bytes and the limit, and sortapp's
    report (its CPU-seconds per GB, one pass or two)."""
    args, tools = ctx["args"], ctx["tools"]
    size = os.path.getsize(partition)
    memory = max(args.local_memory or size // 4, 8 << 20) >> 20 << 20
    # The partition's checksum: sortcheck says it (and exits 1, the partition being unsorted).
    summary = subprocess.run([tools["sortcheck"], "--json", partition], capture_output=True,
                             text=True)
    try:
        checksum = json.loads(summary.stdout)["checksum"]
    except (ValueError, KeyError):
        raise Failure(f"sortcheck of {partition} said no checksum: {summary.stderr[-400:]}")
    work = tempfile.mkdtemp(prefix=".sort-cluster-bench-local-", dir=args.dir)
    res = {"partition_bytes": size, "memory": memory}
    try:
        out = os.path.join(work, "out")
        cmd = [tools["sortapp"], "local", "--json", "--no-progress", "--memory", str(memory),
               "--scratch", work, partition, out]
        text, wall, (rd, wr, limit) = timed(cmd, ctx, "sortapp local")
        validate([out], checksum, tools, "sortapp local")
        os.remove(out)
        report = json.loads(text)
        res["sortapp"] = {"wall_seconds": wall, "sort_seconds": report["seconds"],
                          "one_pass": report["one_pass"],
                          "cpu_seconds_per_gb": report["cpu_seconds_per_gb"],
                          "disk_bytes_read": rd, "disk_bytes_written": wr,
                          "physical_limit_seconds": limit,
                          "over_limit": wall / limit if limit else None}
        res["stxxl"] = None
        stxxl = os.path.join(args.build, "sortapp", "stxxl_sort")
        if os.access(stxxl, os.X_OK):
            copy = os.path.join(work, "stxxl-work")
            shutil.copyfile(partition, copy)  # stxxl::sort sorts in place: not timed
            cmd = [stxxl, copy, str(memory >> 20), str(RECORD), "10",
                   os.path.join(work, "stxxl-scratch")]
            # STXXL writes its logs into the working directory unless told where.
            env = dict(ctx["env"], STXXLLOGFILE=os.path.join(work, "stxxl.log"),
                       STXXLERRLOGFILE=os.path.join(work, "stxxl.errlog"))
            try:
                _, swall, (srd, swr, slimit) = timed(cmd, ctx, "stxxl_sort", env)
            except Failure as e:  # STXXL refuses budgets too small for its block size
                res["stxxl"] = {"refused": str(e)}
                return res
            validate([copy], checksum, tools, "stxxl_sort")
            res["stxxl"] = {"wall_seconds": swall, "disk_bytes_read": srd,
                            "disk_bytes_written": swr, "physical_limit_seconds": slimit,
                            "over_limit": swall / slimit if slimit else None}
            res["speedup_vs_stxxl"] = swall / wall
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


# ---- the whole run ------------------------------------------------------------------------

def find_tools(build):
    tools = {"sortapp": "sortapp/sortapp", "sortgen": "sortapp/sortgen",
             "sortcheck": "sortapp/sortcheck", "msgrun": "libmsg/tools/msgrun"}
    tools = {k: os.path.join(build, v) for k, v in tools.items()}
    missing = [p for p in tools.values() if not os.access(p, os.X_OK)]
    if missing:
        raise Failure(f"not built: {', '.join(missing)} (build with scripts/build.sh "
                      f"{build}, or pass --build)")
    return tools


def bench(args):
    tools = find_tools(args.build)
    created_dir = not os.path.isdir(args.dir)
    os.makedirs(args.dir, exist_ok=True)
    inputs = Inputs(args, tools)
    try:
        return bench_in(args, tools, inputs)
    finally:
        inputs.remove()
        if created_dir:  # removed when empty (inputs kept by --reuse stay)
            try:
                os.rmdir(args.dir)
            except OSError:
                pass


def bench_in(args, tools, inputs):
    if inputs.present() and not args.reuse:
        raise Failure(f"{args.dir} already holds {os.path.basename(inputs.present()[0])}: "
                      "pass --reuse to sort inputs an earlier --reuse run left, or choose "
                      "another --dir (inputs this script did not make are never touched)")
    checksum = inputs.reusable() if args.reuse else None
    need, free = check_space(args, checksum is not None)
    reused = checksum is not None
    if not reused:
        checksum = inputs.generate()
    state = {"drop": not args.no_drop_caches, "why_not": "--no-drop-caches"}
    device, stat = block_device(os.path.realpath(args.dir))
    if stat is None:
        print(f"{TOOL}: {args.dir} is on no block device with /sys statistics; "
              "no disk bytes or physical limit", file=sys.stderr)
    env = dict(os.environ, VIADUCT_MSGRUN=tools["msgrun"])
    ctx = {"args": args, "tools": tools, "state": state, "stat": stat, "env": env,
           "checksum": checksum, "records": inputs.records * args.nodes,
           "disk": measure_disk(args.dir, inputs.paths, inputs.records * RECORD, state)}
    probe_bytes = max(64 << 20, min(1 << 30, inputs.records * RECORD))
    ctx["fresh_huge_gb_s"] = fresh_memory_rate(probe_bytes, state, "huge")
    ctx["fresh_gb_s"] = fresh_memory_rate(probe_bytes, state, "ordinary")
    runs = []
    for key, _, options in RUNS:
        if key == "river-2-pass" and args.two_pass_memory:
            options = options + ["--memory", str(args.two_pass_memory)]
        runs.append(sort_once(key, options, ctx))
    local = None if args.no_local else one_node(ctx, inputs.paths[0])
    three, three_sort = runs[0]["wall_seconds"], runs[0]["sort_seconds"]
    return {"nodes": args.nodes, "partition_bytes": inputs.records * RECORD,
            "records": ctx["records"], "record_size": RECORD, "distribution": args.distribution,
            "dir": os.path.realpath(args.dir), "device": device, "inputs_reused": reused,
            "free_bytes": free, "needed_bytes": need, "page_cache_dropped": state["drop"],
            "page_cache_why_not": None if state["drop"] else state["why_not"],
            "two_pass_memory": args.two_pass_memory, "disk": ctx["disk"],
            "fresh_memory_gb_s": ctx["fresh_gb_s"],
            "fresh_memory_huge_pages_gb_s": ctx["fresh_huge_gb_s"], "runs": runs,
            "one_node": local,
            "speedups": {"river_one_pass_vs_three_phase": three / runs[1]["wall_seconds"],
                         "river_two_pass_vs_three_phase": three / runs[2]["wall_seconds"]},
            "sort_speedups": {
                "river_one_pass_vs_three_phase": three_sort / runs[1]["sort_seconds"],
                "river_two_pass_vs_three_phase": three_sort / runs[2]["sort_seconds"]},
            # What the speedup would be with the river sort exactly at its disk limit: the
            # most this disk allows it, measured in the same run.
            "speedup_at_river_limit": (three / runs[1]["physical_limit_seconds"]
                                       if runs[1]["physical_limit_seconds"] else None)}


# ---- output -------------------------------------------------------------------------------

def fmt(v, spec):
    return format(v, spec) if v is not None else format("-", ">" + spec.split(".")[0])


def print_table(res):
    d = res["disk"]
    cache = "dropped" if res["page_cache_dropped"] else f"NOT dropped ({res['page_cache_why_not']})"
    print(f"# {TOOL}: {res['nodes']} nodes x {human(res['partition_bytes'])} "
          f"({res['records']} records{', reused' if res['inputs_reused'] else ''}) in "
          f"{res['dir']} on {res['device'] or 'no block device'}; MB = 10^6 B")
    print(f"# disk ({'O_DIRECT' if d['direct'] else 'buffered, O_DIRECT refused'}, "
          f"{human(d['request_bytes'])} requests, {d['streams']} x {human(d['bytes'])} at once): "
          f"read {d['read_mb_s']:.0f} MB/s, write {d['write_mb_s']:.0f} MB/s; page cache "
          f"{cache} before each sort")
    print(f"# fresh memory (a new process's first touch): {res['fresh_memory_gb_s']:.2f} GB/s "
          f"in ordinary pages, {res['fresh_memory_huge_pages_gb_s']:.2f} GB/s with huge pages "
          "advised")
    if res["two_pass_memory"]:
        print(f"# river two passes with --memory {human(res['two_pass_memory'])} per node")
    print(f"{'algorithm':17} {'wall s':>8} {'sort s':>8} {'balance':>8} {'disk rd MB':>10} "
          f"{'disk wr MB':>10} {'limit s':>8} {'wall/lim':>8} {'sort/lim':>8} {'CPU-s/GB':>8} "
          f"{'start s':>7} {'RSS GB':>6} {'fresh s':>7} {'1-pass':>6} {'check':>5}")
    labels = {k: label for k, label, _ in RUNS}
    for r in res["runs"]:
        rd = r["disk_bytes_read"] / 1e6 if r["disk_bytes_read"] is not None else None
        wr = r["disk_bytes_written"] / 1e6 if r["disk_bytes_written"] is not None else None
        one = f"{r['one_pass_nodes']}/{res['nodes']}" if r["one_pass_nodes"] is not None else "-"
        print(f"{labels[r['key']]:17} {r['wall_seconds']:8.2f} {r['sort_seconds']:8.2f} "
              f"{fmt(r['balance'], '8.4f')} {fmt(rd, '10.1f')} {fmt(wr, '10.1f')} "
              f"{fmt(r['physical_limit_seconds'], '8.2f')} {fmt(r['over_limit'], '8.2f')} "
              f"{fmt(r['sort_over_limit'], '8.2f')} {fmt(r['cpu_seconds_per_gb'], '8.2f')} "
              f"{fmt(r['startup_seconds'], '7.3f')} "
              f"{fmt(r['peak_rss_bytes'] and r['peak_rss_bytes'] / 1e9, '6.2f')} "
              f"{fmt(r['fresh_memory_cpu_seconds'], '7.2f')} {one:>6} {r['sortcheck']:>5}")
    two = next(r for r in res["runs"] if r["key"] == "river-2-pass")
    if two["one_pass_nodes"]:
        print(f"note: river two passes sorted on {two['one_pass_nodes']} node(s) in one pass "
              "(a share this small fits one run)")
    print("phase actual/expected (median over nodes):")
    for r in res["runs"]:
        ph = ", ".join(f"{k} {fmt(v, '.2f')}" for k, v in r["phase_ratios"].items())
        print(f"  {labels[r['key']]:17} {ph or '-'}")
    print_one_node(res["one_node"])
    for name, s in (("wall", res["speedups"]), ("sort", res["sort_speedups"])):
        print(f"speedup over three-phase ({name} s): river one pass "
              f"{s['river_one_pass_vs_three_phase']:.2f}, river two passes "
              f"{s['river_two_pass_vs_three_phase']:.2f}")
    if res["speedup_at_river_limit"] is not None:
        print(f"the river one pass at its disk limit ({res['runs'][1]['physical_limit_seconds']:.2f}"
              f" s) would be {res['speedup_at_river_limit']:.2f}x the three-phase sort's wall")


def print_one_node(local):
    if local is None:
        return
    s, x = local["sortapp"], local["stxxl"]
    print(f"one node, node 0's partition ({human(local['partition_bytes'])}) with "
          f"{human(local['memory'])} of memory:")
    print(f"  sortapp local  {s['wall_seconds']:8.2f} s wall ({'one pass' if s['one_pass'] else 'two passes'}), "
          f"limit {fmt(s['physical_limit_seconds'], '.2f')} s, wall/limit "
          f"{fmt(s['over_limit'], '.2f')}, {s['cpu_seconds_per_gb']:.2f} CPU-s/GB")
    if x is None:
        print("  stxxl::sort    not built (libstxxl-dev, benchmarks on)")
        return
    if "refused" in x:
        print(f"  stxxl::sort    refused: {x['refused'][-200:]}")
        return
    print(f"  stxxl::sort    {x['wall_seconds']:8.2f} s wall, limit "
          f"{fmt(x['physical_limit_seconds'], '.2f')} s, wall/limit {fmt(x['over_limit'], '.2f')}")
    print(f"  sortapp local speed over stxxl::sort: {local['speedup_vs_stxxl']:.2f}")
    if s["physical_limit_seconds"]:
        print(f"  sortapp local at its disk limit would be "
              f"{x['wall_seconds'] / s['physical_limit_seconds']:.2f}x stxxl::sort")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="sort-cluster-bench.py", description=__doc__.split("\n\n")[0],
        epilog="Columns are explained in docs/sortapp-cluster.md (Benchmark).")
    p.add_argument("--nodes", type=int, default=4, help="sort nodes (default 4)")
    p.add_argument("--size", type=parse_size, default=1 << 30,
                   help="bytes per node, like 16K, 32M, 1G (default 1G; whole 100-byte records)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="the build directory (default: build/ at the top of the tree)")
    p.add_argument("--dir", help="data directory (default BUILD/sort-cluster-bench)")
    p.add_argument("--reuse", action="store_true",
                   help="sort the inputs an earlier --reuse run left in --dir (made if absent) "
                        "and keep them afterwards")
    p.add_argument("--distribution", default="uniform", help="sortgen's key distribution")
    p.add_argument("--two-pass-memory", type=parse_size, default=0, metavar="SIZE",
                   help="also give the two-pass river run --memory SIZE (below a node's share)")
    p.add_argument("--sortapp-args", default="",
                   help="more `sortapp run` options for every sort, one string")
    p.add_argument("--local-memory", type=parse_size, default=0, metavar="SIZE",
                   help="the one-node sorts' memory (default a quarter of a partition, at least "
                        "8M)")
    p.add_argument("--no-local", action="store_true",
                   help="skip the one-node sorts (sortapp local and STXXL)")
    p.add_argument("--no-drop-caches", action="store_true",
                   help="leave the page cache alone (sync only)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    if not 1 <= args.nodes <= 256:
        p.error("--nodes must be in 1..256")
    if args.size < RECORD:
        p.error(f"--size must hold at least one {RECORD}-byte record")
    args.dir = os.path.abspath(args.dir or os.path.join(args.build, "sort-cluster-bench"))
    args.sortapp_args = args.sortapp_args.split()
    return args


def main(argv):
    args = parse_args(argv)
    # SIGTERM ends the run like Ctrl-C: the finally blocks remove what it made.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"{TOOL}: terminated"))
    try:
        res = bench(args)
    except Failure as e:
        print(f"{TOOL}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{TOOL}: interrupted", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print_table(res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
