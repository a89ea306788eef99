#!/usr/bin/env python3
"""The DataPump against the usual ways of copying a file, in one run (docs/river.md).

Measures, on the disk holding --dir: the disk's own read and write rates (dd with
iflag=direct / oflag=direct, 4 MiB requests), then copies one file of --size bytes with cp
(followed by `sync FILE`, so the copy is on disk), dd bs=1M conv=fsync, and datapump
(msgrun -n 2: rank 0 reads, rank 1 writes, fdatasync before its rename), and the river path
alone (datapump --no-disk). Every copy starts with the input out of the page cache
(posix_fadvise DONTNEED after fsync) and is compared with its input afterwards.

Prints one table: MB/s (10^6 bytes/s) timed from outside for every method (process
start-up included), datapump's own figure (from the river's open to the rename), CPU time
per byte (all processes of the method), and the ratio to min(disk read, disk write). With
--repeat R each figure is the median of R runs. --json prints the figures as one object.
Figures, not pass/fail: nothing here judges speed.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.normpath(os.path.join(HERE, "..", "..", "build"))


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def evict(path):
    """Drops the file's pages from the page cache (written back first)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(cmd, env=None):
    """Runs cmd; returns (seconds, CPU seconds of it and its children, stdout)."""
    c0, t0 = children_cpu(), time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds, cpu = time.monotonic() - t0, children_cpu() - c0
    if p.returncode != 0:
        sys.exit(f"datapump-bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr[-500:]}")
    return seconds, cpu, p.stdout


def make_input(path, size):
    """size bytes of incompressible data, then out of the cache."""
    chunk = os.urandom(16 << 20)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n
    evict(path)


def same(a, b):
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


class Bench:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.src, self.out = f"{work}/in", f"{work}/out"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
        if args.provider:
            self.env["VIADUCT_PROVIDER"] = args.provider
        self.rows = []

    def disk_write(self):
        scratch = f"{self.work}/scratch"
        count = max(1, self.args.size // (4 << 20))
        s, cpu, _ = timed(["dd", "if=/dev/zero", f"of={scratch}", "bs=4M", f"count={count}",
                           "oflag=direct", "conv=fsync", "status=none"])
        os.remove(scratch)
        return count * (4 << 20), s, cpu, None

    def disk_read(self):
        evict(self.src)
        s, cpu, _ = timed(["dd", f"if={self.src}", "of=/dev/null", "bs=4M", "iflag=direct",
                           "status=none"])
        return self.args.size, s, cpu, None

    def copy(self, cmd, own=None):
        if os.path.exists(self.out):
            os.remove(self.out)
        evict(self.src)
        s, cpu, stdout = timed(cmd, self.env)
        if not same(self.src, self.out):
            sys.exit(f"datapump-bench: {cmd[0]}'s copy differs from the input")
        evict(self.out)
        return self.args.size, s, cpu, own(stdout) if own else None

    def datapump(self, extra):
        return [self.args.msgrun, "-n", "2", self.args.datapump, "--json"] + extra

    def methods(self):
        dp_files = ["--from", f"0:{self.src}", "--to", f"1:{self.out}"] + self.args.datapump_args
        own = lambda out: json.loads(out)["mb_per_s"]
        return [
            ("disk read (dd 4M iflag=direct)", "read", self.disk_read),
            ("disk write (dd 4M oflag=direct)", "write", self.disk_write),
            ("cp + sync", "cp", lambda: self.copy(["sh", "-c", f'cp "$1" "$2" && sync "$2"', "cp",
                                                   self.src, self.out])),
            ("dd bs=1M conv=fsync", "dd", lambda: self.copy(
                ["dd", f"if={self.src}", f"of={self.out}", "bs=1M", "conv=fsync", "status=none"])),
            ("datapump disk to disk", "datapump", lambda: self.copy(self.datapump(dp_files), own)),
            ("datapump --direct", "datapump-direct",
             lambda: self.copy(self.datapump(dp_files + ["--direct"]), own)),
            ("datapump --no-disk", "no-disk", lambda: self.nodisk(own)),
        ]

    def nodisk(self, own):
        s, cpu, stdout = timed(self.datapump(["--no-disk", "--bytes", str(self.args.size)] +
                                             self.args.datapump_args), self.env)
        return self.args.size, s, cpu, own(stdout)

    def run(self):
        make_input(self.src, self.args.size)
        for name, key, fn in self.methods():
            runs = [fn() for _ in range(self.args.repeat)]
            mbs = statistics.median(b / s / 1e6 for b, s, _, _ in runs)
            cpu = statistics.median(c / b * 1e9 for b, _, c, _ in runs)
            own = [o for _, _, _, o in runs if o is not None]
            self.rows.append({"method": name, "key": key, "mb_per_s": mbs,
                              "own_mb_per_s": statistics.median(own) if own else None,
                              "cpu_ns_per_byte": cpu})


def report(bench, args):
    rows = {r["key"]: r for r in bench.rows}
    floor = min(rows["read"]["mb_per_s"], rows["write"]["mb_per_s"])
    for r in bench.rows:
        r["ratio"] = r["mb_per_s"] / floor
        r["own_ratio"] = r["own_mb_per_s"] / floor if r["own_mb_per_s"] else None
    if args.json:
        print(json.dumps({"size": args.size, "dir": args.dir, "repeat": args.repeat,
                          "min_disk_mb_per_s": floor, "rows": bench.rows}, indent=1))
        return
    print(f"datapump-bench: {args.size} bytes in {args.dir}, median of {args.repeat}; "
          f"min(read, write) = {floor:.0f} MB/s")
    print(f"{'method':34} {'MB/s':>8} {'own MB/s':>9} {'CPU ns/B':>9} {'ratio':>6} {'own ratio':>9}")
    for r in bench.rows:
        own = f"{r['own_mb_per_s']:9.0f}" if r["own_mb_per_s"] else f"{'':9}"
        own_ratio = f"{r['own_ratio']:9.2f}" if r["own_ratio"] else f"{'':9}"
        print(f"{r['method']:34} {r['mb_per_s']:8.0f} {own} {r['cpu_ns_per_byte']:9.2f} "
              f"{r['ratio']:6.2f} {own_ratio}")
    print("MB/s: timed from outside (process start-up included); own: datapump's report "
          "(river open to rename); ratio: MB/s / min(disk read, disk write)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=1 << 30, help="file size (default 1G)")
    p.add_argument("--dir", default="/var/tmp", help="where the files go (default /var/tmp)")
    p.add_argument("--repeat", type=int, default=1, help="runs per method, median reported")
    p.add_argument("--provider", default="", help="VIADUCT_PROVIDER for datapump")
    p.add_argument("--msgrun", default=os.path.join(BUILD, "libmsg/tools/msgrun"))
    p.add_argument("--datapump", default=os.path.join(BUILD, "river/tools/datapump"))
    p.add_argument("--datapump-args", default="", help="more datapump options, one string")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    args.datapump_args = args.datapump_args.split()
    for tool in (args.msgrun, args.datapump):
        if not os.access(tool, os.X_OK):
            sys.exit(f"datapump-bench: {tool} is not there (build it, or pass --msgrun/--datapump)")
    work = tempfile.mkdtemp(prefix="datapump-bench-", dir=args.dir)
    try:
        bench = Bench(args, work)
        bench.run()
        report(bench, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
