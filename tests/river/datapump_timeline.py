#!/usr/bin/env python3
"""datapump --timeline DIR: the sink's counters sampled through the copy, as a timeline.

A copy under msgrun writes timeline.jsonl, .csv, .png and .html; every JSON line is the sink's
rank with a nondecreasing t and one of the sink's steps, the first sample "starting" and the
last "committing", whose bytes are the file's and whose network bytes received (msg_get_stats)
at least that; the copy is byte-exact. --no-disk and --json work with it (--json says nothing
on stderr about the files). --sample-hz 0, abc and 1000 and --sample-hz without --timeline are
usage errors (exit 2) naming the option; a world-writable directory without the sticky bit is
refused by the sink before the copy, which then leaves no output. Nothing here depends on
timing. Binaries from MSGRUN_BIN and DATAPUMP_BIN; gnuplot from the PATH.
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures, slurp  # noqa: E402
import timeline_checks  # noqa: E402
from timeline_checks import check_files, check_rows, world_writable  # noqa: E402

MSGRUN = os.environ["MSGRUN_BIN"]
DATAPUMP = os.environ["DATAPUMP_BIN"]
STEPS = {"starting", "pumping", "committing"}
SIZE = 3 * 1024 * 1024 + 7


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    env["VIADUCT_TEST_SLOWDOWN"] = str(SLOW)
    return env


def pump(args, ranks=2, timeout=120):
    """msgrun -n RANKS datapump ARGS; returns the completed process."""
    cmd = [MSGRUN, "-n", str(ranks), "--timeout", str(timeout * SLOW), DATAPUMP] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=clean_env(),
                          timeout=timeout * SLOW + 60)


def check_timeline(what, tl, sink, size):
    """The four files, and the JSON lines of the sink's rank."""
    check_files(what, tl)
    rows = check_rows(what, f"{tl}/timeline.jsonl", sink, STEPS, "starting", "committing",
                      done="bytes")
    if not rows:
        return
    check(rows[-1]["bytes"] == size, f"{what}: last sample has {rows[-1]['bytes']} bytes")
    check(rows[-1]["net_received_bytes"] >= size,
          f"{what}: {rows[-1]['net_received_bytes']} bytes received over libmsg, not {size}")


def copy(d):
    with open(f"{d}/in", "wb") as f:
        f.write(os.urandom(SIZE))
    tl = f"{d}/made/tl"
    p = pump(["--from", f"0:{d}/in", "--to", f"1:{d}/out", "--timeline", tl])
    check(p.returncode == 0, f"--timeline: exit {p.returncode}: {p.stderr[-500:]}")
    check(os.path.isfile(f"{d}/out") and filecmp.cmp(f"{d}/in", f"{d}/out", shallow=False),
          "--timeline: the copy differs from its input")
    check(f"timeline in {tl}" in p.stderr, f"--timeline: where it went not said: {p.stderr!r}")
    check_timeline("--timeline", tl, 1, SIZE)
    check("datapump: " in slurp(f"{tl}/timeline.html"), "--timeline: the page has no report")


def no_disk_json(d):
    tl = f"{d}/tl-nodisk"
    n = 8 * 1024 * 1024
    p = pump(["--no-disk", "--bytes", str(n), "--json", "--timeline", tl, "--sample-hz", "100"])
    check(p.returncode == 0, f"--no-disk --timeline: exit {p.returncode}: {p.stderr[-500:]}")
    check("timeline in" not in p.stderr, f"--json --timeline: said on stderr: {p.stderr!r}")
    try:
        check(json.loads(p.stdout)["bytes"] == n, f"--no-disk --timeline: {p.stdout[:300]!r}")
    except (ValueError, KeyError):
        check(False, f"--no-disk --json --timeline: stdout is not the report: {p.stdout[:300]!r}")
    check_timeline("--no-disk --timeline", tl, 1, n)


def bad_rates(d):
    timeline_checks.bad_rates(
        lambda args: subprocess.run([DATAPUMP, "--from", f"0:{d}/in", "--to", f"1:{d}/out-bad"] +
                                    args, capture_output=True, text=True, env=clean_env(),
                                    timeout=60), d, f"{d}/out-bad")


def unsafe_directory(d):
    ww = world_writable(d)
    before = sorted(os.listdir(d))
    p = pump(["--from", f"0:{d}/in", "--to", f"1:{d}/out-unsafe", "--timeline", ww])
    check(p.returncode != 0, "--timeline into a world-writable directory: exit 0")
    check("not writing the timeline" in p.stderr and "sticky" in p.stderr,
          f"--timeline into a world-writable directory: unclear refusal: {p.stderr!r}")
    check(sorted(os.listdir(d)) == before, f"unsafe --timeline: left {sorted(os.listdir(d))}")
    check(os.listdir(ww) == [], f"unsafe --timeline: left {os.listdir(ww)} in the directory")


def main():
    if shutil.which("gnuplot") is None:
        print("gnuplot is not installed: the timeline's PNG cannot be drawn", flush=True)
        return SKIP
    d = tempfile.mkdtemp(prefix="datapump-timeline-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        copy(d)
        no_disk_json(d)
        bad_rates(d)
        unsafe_directory(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{len(failures)} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
