"""What viaduct's Python test drivers share: the slowdown factor, meson's skip code, checks
that record a failure and go on, and reading files for assertions.

A driver imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "<up>", "pylib"))
"""
import hashlib
import os

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
