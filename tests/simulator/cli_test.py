#!/usr/bin/env python3
"""sansim's command line: --help, a --json run whose figures add up, and bad input that fails
with exit status 2 and a message naming the problem (the file and line for a topology file).
usage: cli_test.py SANSIM BAD_TOPOLOGY_FILE"""
import json
import subprocess
import sys

sansim, bad_topo = sys.argv[1], sys.argv[2]
failures = []


def run(*args):
    return subprocess.run([sansim, *args], capture_output=True, text=True, timeout=120)


def expect(cond, what, result):
    if not cond:
        failures.append(f"{what}\n  exit {result.returncode}\n  stdout: {result.stdout[:500]}"
                        f"\n  stderr: {result.stderr[:500]}")


r = run("--help")
expect(r.returncode == 0 and "--topology" in r.stdout, "--help prints the options", r)

r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--json")
try:
    d = json.loads(r.stdout)
    # 4 nodes, all-to-all, 4096 B to each of 3 peers: every byte injected is delivered once.
    expect(r.returncode == 0 and d["complete"] and not d["deadlock"] and d["nodes"] == 4
           and d["payload_injected"] == 4 * 3 * 4096 == d["payload_delivered"]
           and d["duplicate_deliveries"] == 0 and d["sim_time_us"] > 0 and d["events"] > 0,
           "--json run of crossbar:4 accounts for every byte", r)
except (ValueError, KeyError) as e:
    expect(False, f"--json prints one JSON object with the run's figures ({e})", r)

r = run("--no-such-flag")
expect(r.returncode == 2 and "unknown option '--no-such-flag'" in r.stderr,
       "an unknown option is named", r)
r = run("--topology", "crossbar:4", "--rounds", "zero")
expect(r.returncode == 2 and "--rounds" in r.stderr, "a bad value names its option", r)
r = run("--topology", bad_topo)
expect(r.returncode == 2 and f"{bad_topo}:4:" in r.stderr and "already connected" in r.stderr,
       "a bad topology file is reported at its line", r)
r = run("--topology", "/nonexistent/fabric.topo")
expect(r.returncode == 2 and "/nonexistent/fabric.topo" in r.stderr,
       "a missing topology file is named", r)

for f in failures:
    print("FAIL:", f)
print(f"{6 - len(failures)} of 6 command-line checks passed")
sys.exit(1 if failures else 0)
