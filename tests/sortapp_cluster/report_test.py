#!/usr/bin/env python3
"""The distributed sort's report says each cause once.

usage: report_test.py stale
  stale   every node's cached disk figure is far too low (a cache written by the test, as if
          measured on a busy machine), so every node's phases beat their expectations: the
          text report names the stale figures in one line, said once on stdout and stderr
          together; the nodes mark the cache entry stale without measuring the disk (a probe
          never runs inside a sort unasked), so the next run, with --json, uses the same
          figure and reports it stale again, node by node.
Binaries come from SORTAPP_BIN, SORTGEN_BIN and SORTCHECK_BIN; the disk cache is a private
one (XDG_CACHE_HOME in the test's directory).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SLOW, check, failures, run_case  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]
CAUSE = "stale disk figures:"


def write_slow_cache(d, cache_home, mb_s):
    """A disk cache whose entry for d's device says it reads and writes at mb_s, with the
    request size and depth the nodes use (2 MiB, 15)."""
    os.makedirs(os.path.join(cache_home, "viaduct"), mode=0o700, exist_ok=True)
    device = str(os.stat(d).st_dev)
    conditions = {"date": "2020-01-01T00:00:00Z", "measured_at": time.time() - 60,
                  "io_size": 2 << 20, "io_depth": 15, "file_bytes": 64 << 20,
                  "load_average": 9.0, "device": device, "direct": True, "seconds": 3.0}
    doc = {"format": "viaduct-sortapp-disk", "version": 1,
           "devices": {device: {"read_mb_s": mb_s, "write_mb_s": mb_s, "mixed_mb_s": mb_s,
                                "conditions": conditions}}}
    with open(os.path.join(cache_home, "viaduct", "sortapp-disk.json"), "w") as f:
        json.dump(doc, f)


def run_job(d, env, extra):
    return subprocess.run([SORTAPP, "run", "-n", "4", "--input", f"{d}/in.{{rank}}", "--output",
                           f"{d}/out.{{rank}}", "--timeout", str(300 * SLOW), *extra],
                          capture_output=True, text=True, env=env, timeout=400 * SLOW)


def validate(d, what):
    got = json.loads(subprocess.run([SORTCHECK, "--json", *[f"{d}/out.{k}" for k in range(4)]],
                                    capture_output=True, text=True).stdout)
    check(got["sorted"] and got["records"] == 4 * 20000, f"{what}: outputs {got}")


def case_stale(d):
    for k in range(4):
        subprocess.run([SORTGEN, "--seed", "3", "--first", str(k * 20000), "20000",
                        f"{d}/in.{k}"], check=True, capture_output=True)
    cache_home = os.path.join(d, "cache")
    env = dict(os.environ, XDG_CACHE_HOME=cache_home)
    # 2 MB in and out per node at 0.5 MB/s is expected to take 8 s: any real sort beats it.
    write_slow_cache(d, cache_home, 0.5)
    r = run_job(d, env, [])
    if not check(r.returncode == 0, f"text: exit {r.returncode}: {r.stderr[-2000:]}"):
        return
    both = r.stdout + r.stderr
    check(both.count(CAUSE) == 1,
          f"text: the stale figures' cause said {both.count(CAUSE)} times: {both[-3000:]}")
    check("stale" not in r.stderr, f"text: stale figures on stderr: {r.stderr[-2000:]}")
    line = next((x for x in r.stdout.splitlines() if x.startswith(CAUSE)), "")
    check("nodes 0-3" in line and "kept until --remeasure" in line,
          f"text: the cause does not name nodes 0-3 and the remedy: {line!r}")
    validate(d, "text")
    print(f"text: {len(r.stdout.splitlines())} lines on stdout, {len(r.stderr.splitlines())} "
          f"on stderr; {line}", flush=True)
    # The nodes marked the entry stale and measured nothing: the same figure, flagged.
    with open(os.path.join(cache_home, "viaduct", "sortapp-disk.json")) as f:
        entry = json.load(f)["devices"][str(os.stat(d).st_dev)]
    check(entry.get("stale") is True and entry["read_mb_s"] == 0.5
          and entry["conditions"]["date"] == "2020-01-01T00:00:00Z",
          f"text: the cache entry was re-measured or not marked stale: {entry}")
    r = run_job(d, env, ["--json"])
    if not check(r.returncode == 0, f"json: exit {r.returncode}: {r.stderr[-2000:]}"):
        return
    check(r.stderr.count(CAUSE) == 1,
          f"json: the cause said {r.stderr.count(CAUSE)} times on stderr: {r.stderr[-2000:]}")
    rep = json.loads(r.stdout)
    stale = rep.get("stale_figures", [])
    check({s.get("node") for s in stale} == {0, 1, 2, 3},
          f"json: stale_figures does not hold every node: {stale}")
    check(all({"node", "phase", "seconds", "expected_seconds", "times_faster"}
              <= set(s) for s in stale), f"json: a stale figure lacks a field: {stale}")
    flagged = [p for n in rep["per_node"] for p in n["phases"] if p["stale_figure"]]
    check(len(flagged) == len(stale), f"json: {len(flagged)} phases flagged, {len(stale)} listed")
    validate(d, "json")


def main():
    cases = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}
    return run_case("sortapp-report", cases)


if __name__ == "__main__":
    sys.exit(main())
