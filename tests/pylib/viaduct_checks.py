"""What viaduct's Python test drivers share: the slowdown factor, meson's skip code, checks
that record a failure and go on, and reading files for assertions.

A driver imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "<up>", "pylib"))
"""
import hashlib
import os
import shutil
import sys
import tempfile

# VIADUCT_TEST_SLOWDOWN (>= 1): how much slower this build runs than a plain release build.
SLOW = int(os.environ.get("VIADUCT_TEST_SLOWDOWN", "1"))
SKIP = 77  # meson's code for a skipped test

# Every failed check, in order; a driver exits non-zero when it is not empty.
failures = []
# How many checks ran (counts["checks"]), for a driver's "N of M passed" line.
counts = {"checks": 0}


def check(cond, what):
    """Records `what` as a failure unless cond holds; returns cond."""
    counts["checks"] += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def slurp(path):
    """The file's text ("" if it does not exist yet)."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def sha(path):
    """The file's SHA-256, read a block at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_case(prefix, cases):
    """The main of a test file whose argv[1] names one of its cases: `cases` maps a name to a
    function of a fresh temporary directory (removed after). Prints the outcome; returns the
    exit status (2 for an unknown case)."""
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    fn = cases.get(case)
    if fn is None:
        print(f"unknown case {case!r}; known: {', '.join(sorted(cases))}")
        return 2
    d = tempfile.mkdtemp(prefix=f"{prefix}-{case}-")
    try:
        fn(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{case}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0
