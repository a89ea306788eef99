#!/usr/bin/env python3
"""`sortapp local --timeline DIR`: the counter sampler's timeline of one local sort.

A two-pass sort of a small generated input writes timeline.jsonl, .csv, .png and .html; every
JSON line is node 0 with a nondecreasing t and a phase the local sort names, the first sample
"starting" and the last "finishing", and the sorted output is right. --json names the files in
its document and says nothing on stderr about them. --sample-hz 0, abc and 1000 and --sample-hz
without --timeline are usage errors (exit 2) naming the option; a world-writable directory
without the sticky bit (or one below it) is refused before the sort, which then writes no
output; a sort that fails after it began (its input grows while SORTAPP_TEST_HOLD holds it at
phase 2) still writes a timeline titled as failed; a timeline that cannot be drawn (no gnuplot
on the PATH) is a named error and a non-zero exit that leaves the sorted output in place.
Nothing here depends on timing.
Binaries from SORTAPP_BIN, SORTGEN_BIN and SORTCHECK_BIN; gnuplot from the PATH.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, check, failures, sha, slurp  # noqa: E402
import timeline_checks  # noqa: E402
from timeline_checks import FILES, check_files, check_rows, world_writable  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]
PHASES = {"starting", "phase 1", "phase 2", "finishing"}
RECORDS = 200000


def local(d, out, extra, env=None):
    """sortapp local of d/in into `out`: 8 MiB of memory for 20 MB makes it two-pass."""
    cmd = [SORTAPP, "local", "--memory", "8M", "--no-measure", "--no-direct", "--no-progress"]
    return subprocess.run(cmd + extra + [f"{d}/in", out], capture_output=True, text=True,
                          env=env, timeout=300)


def check_jsonl(what, path):
    """The JSON lines: node 0 from "starting" to "finishing", and no network bytes."""
    rows = check_rows(what, path, 0, PHASES, "starting", "finishing")
    check(all(r["net_sent_bytes"] == 0 and r["net_received_bytes"] == 0 for r in rows),
          f"{what}: network bytes in a local sort")
    return rows


def sorted_right(what, path):
    r = subprocess.run([SORTCHECK, "-q", "--expect-records", str(RECORDS), path],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{what}: sortcheck exit {r.returncode}: {r.stdout}{r.stderr}")


def happy_path(d):
    tl = f"{d}/made/below/tl"
    r = local(d, f"{d}/out", ["--timeline", tl])
    check(r.returncode == 0, f"--timeline: exit {r.returncode}: {r.stderr[-500:]}")
    check(f"timeline in {tl}" in r.stderr, f"--timeline: where it went not said: {r.stderr!r}")
    check_files("--timeline", tl)
    rows = check_jsonl("--timeline", f"{tl}/timeline.jsonl")
    # Every record goes through phase 1 and through the merge at least once.
    check(rows and rows[-1]["records"] >= 2 * RECORDS,
          f"--timeline: last sample counts {rows[-1]['records'] if rows else None} records")
    sorted_right("--timeline", f"{d}/out")
    check("records of 100 B, two-pass" in slurp(f"{tl}/timeline.html"),
          "--timeline: the page's title does not describe the sort")


def json_and_rate(d):
    tl = f"{d}/json-tl"
    r = local(d, f"{d}/out-json", ["--json", "--timeline", tl, "--sample-hz", "100"])
    check(r.returncode == 0, f"--json --timeline: exit {r.returncode}: {r.stderr[-500:]}")
    check("timeline in" not in r.stderr, f"--json --timeline: said on stderr: {r.stderr!r}")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
        check(False, f"--json --timeline: stdout is not JSON: {r.stdout[:300]!r}")
    check(sorted(os.path.basename(p) for p in doc.get("timeline", [])) == sorted(FILES),
          f"--json --timeline: the document's timeline is {doc.get('timeline')}")
    check_files("--sample-hz 100", tl)
    check_jsonl("--sample-hz 100", f"{tl}/timeline.jsonl")


def bad_rates(d):
    timeline_checks.bad_rates(lambda args: local(d, f"{d}/out-bad", args), d, f"{d}/out-bad")


def unsafe_directory(d):
    ww = world_writable(d)
    for tl in (ww, f"{ww}/below"):
        r = local(d, f"{d}/out-unsafe", ["--timeline", tl])
        check(r.returncode != 0, f"--timeline {tl}: exit 0 into a world-writable directory")
        check("not writing the timeline" in r.stderr and "sticky" in r.stderr,
              f"--timeline {tl}: unclear refusal: {r.stderr!r}")
        check(not os.path.exists(f"{d}/out-unsafe"), f"--timeline {tl}: the output was written")
        check(os.listdir(ww) == [], f"--timeline {tl}: left {os.listdir(ww)}")


def failed_sort(d):
    """A sort that fails after it began (its input grows while it is held at the start of phase
    2) still writes its timeline, titled as failed, and leaves no output."""
    shutil.copy(f"{d}/in", f"{d}/in-grows")
    held, tl = f"{d}/held", f"{d}/tl-failed"
    env = dict(os.environ, SORTAPP_TEST_HOLD=f"sortapp local|phase 2|{held}")
    cmd = [SORTAPP, "local", "--memory", "8M", "--no-measure", "--no-direct", "--no-progress",
           "--timeline", tl, f"{d}/in-grows", f"{d}/out-failed"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not os.path.exists(held):
        time.sleep(0.01)
    if os.path.exists(held):
        with open(f"{d}/in-grows", "ab") as f:
            f.write(b"x" * 100)
        os.remove(held)
    out, err = proc.communicate(timeout=300)
    check(proc.returncode == 2, f"failed sort: exit {proc.returncode}: {err[-500:]}")
    check("changed while it was being sorted" in err, f"failed sort: {err[-500:]!r}")
    check(not os.path.exists(f"{d}/out-failed"), "failed sort: an output was kept")
    check_files("failed sort", tl)
    check_jsonl("failed sort", f"{tl}/timeline.jsonl")
    check("two-pass (8 runs), 20.0 MB, failed" in slurp(f"{tl}/timeline.html"),
          "failed sort: the page's title does not say the sort failed")


def no_gnuplot(d):
    """The timeline cannot be drawn: a named error, exit 2, the sorted output kept as it is."""
    empty = f"{d}/empty-path"
    os.mkdir(empty)
    env = dict(os.environ, PATH=empty)
    r = local(d, f"{d}/out-nogp", ["--timeline", f"{d}/tl-nogp"], env=env)
    check(r.returncode == 2, f"no gnuplot: exit {r.returncode}, not 2")
    check("timeline was not written" in r.stderr and "gnuplot" in r.stderr,
          f"no gnuplot: the error does not name it: {r.stderr!r}")
    check(os.path.isfile(f"{d}/out-nogp") and sha(f"{d}/out-nogp") == sha(f"{d}/out"),
          "no gnuplot: the sorted output is not the same as without a timeline")
    check(not any(n.startswith("timeline.") for n in os.listdir(f"{d}/tl-nogp")),
          f"no gnuplot: published {os.listdir(f'{d}/tl-nogp')}")


def main():
    if shutil.which("gnuplot") is None:
        print("gnuplot is not installed: the timeline's PNG cannot be drawn", flush=True)
        return SKIP
    d = tempfile.mkdtemp(prefix="sortapp-local-timeline-")
    try:
        subprocess.run([SORTGEN, "-q", str(RECORDS), f"{d}/in"], check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        happy_path(d)
        json_and_rate(d)
        bad_rates(d)
        unsafe_directory(d)
        failed_sort(d)
        no_gnuplot(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{len(failures)} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
