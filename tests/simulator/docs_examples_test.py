#!/usr/bin/env python3
"""Every command in docs/sansim.md's ```sh blocks runs, as written, and prints figures that
mean what they seem: exit status 0, nothing on stderr, no NaN, no empty figure ("none"), no
note that the run was cut short, no deadlock; a SATURATED verdict only where the comment above
the command says the run saturates, and then the steady-state check says NO; open loops
below saturation accept what they injected; sweeps print a row per run and draw their plot.
A few slow examples run with smaller bounds (BOUNDS below); a bound that no longer matches a
command fails, so the list follows the page.
Without gnuplot the examples run without their --plot.
The commands run in a scratch directory where build/, simulator/ and tests/ lead to the
binaries under test and the sources. The block that traces a sort needs sortapp and sortgen.
usage: docs_examples_test.py SANSIM DOC [SORTAPP SORTGEN]"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sansim, doc = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sortapp = os.path.abspath(sys.argv[3]) if len(sys.argv) > 4 else None
sortgen = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
source = os.path.dirname(os.path.dirname(doc))

# (text in the page, what the test runs instead, why)
BOUNDS = [
    ("--sweep-nodes 2,4,8,16,32,64", "--sweep-nodes 2,4,8,16",
     "the 32- and 64-node all-to-alls take seconds each"),
    ("--booksim /tmp/booksim2/src/booksim", "--booksim /nonexistent/booksim --period 1000",
     "sansim's half only (BookSim is not part of the project), a tenth of the cycles"),
    ("--runs 3", "--runs 1", "one run of each case is enough to check its figures"),
    ("--cases fattree4096", "--period 2500 --cases fattree4096",
     "a tenth of the 4,096-node tree's short periods is 400 cycles, too few to reach the load"),
]
# Commands that are not examples of sansim's use: the build that made the binary under test.
SKIP = ("scripts/build.sh",)
# A block is sansim's when it runs sansim, itself or through its comparison with BookSim.
SANSIM_USERS = r"build/simulator/sansim|simulator/bench/booksim_compare\.py"

failures = []
checks = 0


def expect(cond, what, cmd, r=None):
    global checks
    checks += 1
    if not cond:
        out = f"\n  stdout: {r.stdout[-1500:]}\n  stderr: {r.stderr[-1500:]}" if r else ""
        failures.append(f"{what}\n  command: {cmd}{out}")


def commands(text):
    """(comment, command) for each command of each ```sh block; the comment is what the lines
    above it and its own trailing comment say."""
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        comment, pending = "", ""
        for line in block.splitlines():
            stripped = line.strip()
            if stripped.startswith("#"):
                comment += " " + stripped[1:].strip()
                continue
            pending += stripped[:-1] + " " if stripped.endswith("\\") else stripped
            if stripped.endswith("\\") or not pending:
                continue
            cmd, _, trailing = pending.partition(" #")
            yield block, (comment + " " + trailing).strip(), " ".join(cmd.split())
            comment, pending = "", ""


def bounded(cmd, used):
    for i, (old, new, _) in enumerate(BOUNDS):
        if old in cmd:
            cmd = cmd.replace(old, new)
            used.add(i)
    if shutil.which("gnuplot") is None:  # the plots need it (plot_test.py checks them)
        cmd = re.sub(r" --plot \S+", "", cmd)
    return cmd


def number(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else math.nan


def check_text(cmd, comment, r):
    out = r.stdout
    expect(not re.search(r"\b(nan|inf)\b", out, re.I), "no NaN or infinite figure", cmd, r)
    expect(not re.search(r": none$", out, re.M), "no figure left empty ('none')", cmd, r)
    expect("note:" not in out, "no note that the run was cut short", cmd, r)
    expect("DEADLOCK" not in out and "STALLED" not in out, "no deadlock or stall", cmd, r)
    saturated = "SATURATED:" in out
    expect(saturated == ("saturat" in comment.lower()),
           "SATURATED exactly where the page says the run saturates", cmd, r)
    if "steady state: NO" in out:
        expect(saturated, "a run that is not steady says why (SATURATED)", cmd, r)
    if "open loop: offered load" in out and not saturated:
        injected = number(r"injected ([0-9.]+), accepted", out)
        accepted = number(r"accepted ([0-9.]+) of injection", out)
        mean = number(r"measured mean ([0-9.]+) us", out)
        expect(accepted >= 0.9 * injected and "steady state: yes" in out,
               f"an open loop below saturation accepts what it injects ({accepted} of "
               f"{injected}) and is steady", cmd, r)
        expect(mean > 0, f"its latency is measured ({mean} us)", cmd, r)
    if "--workload replay" in cmd:
        ratio = number(r"ratio ([0-9.]+)", out)
        expect(re.search(r"^replay: \d+ ranks, [1-9]\d* messages", out, re.M) and ratio > 0,
               "the replay names its ranks and messages and predicts a time", cmd, r)


def check_sweep(cmd, r, workdir):
    nodes = re.search(r"--sweep-nodes ([0-9,]+)", cmd).group(1).split(",")
    modes = 2 if "--protocol both" in cmd else 1
    rows = re.findall(r"^nodes +\d+ .* bidirectional +([0-9.]+) MB/s/node", r.stdout, re.M)
    expect(len(rows) == len(nodes) * modes and all(float(x) > 0 for x in rows),
           f"a row with a throughput per node count and protocol ({len(rows)})", cmd, r)
    plot = re.search(r"--plot (\S+)", cmd)
    if plot:
        png = os.path.join(workdir, plot.group(1), "throughput_vs_nodes.png")
        expect(os.path.exists(png), "the sweep's plot is drawn", cmd, r)


def check_load_sweep(cmd, r, workdir):
    loads = re.search(r"--sweep-load ([0-9.,]+)", cmd).group(1).split(",")
    rows = re.findall(r"^ +([0-9.]+) +[0-9.]+ +[0-9.]+ +([0-9.]+) ", r.stdout, re.M)
    expect(len(rows) == len(loads) and all(float(mean) > 0 for _, mean in rows),
           f"a row with a latency per offered load ({len(rows)} of {len(loads)})", cmd, r)
    expect("saturation: " in r.stdout, "the saturation point is named", cmd, r)
    plot = re.search(r"--plot (\S+)", cmd)
    if plot:
        png = os.path.join(workdir, plot.group(1), "latency_vs_load.png")
        expect(os.path.exists(png), "the load sweep's plot is drawn", cmd, r)


def check_sansim(cmd, comment, r, workdir):
    expect(r.returncode == 0 and r.stderr == "", "exit status 0, nothing on stderr", cmd, r)
    if r.returncode != 0:
        return
    if "--help" in cmd:
        expect("--topology" in r.stdout, "--help lists the options", cmd, r)
    elif "--json" in cmd:
        try:
            d = json.loads(r.stdout, parse_constant=lambda c: math.nan)
            expect(d["complete"] and d["verdict"] == "" and d["payload_delivered"] > 0
                   and d["payload_injected"] == d["payload_delivered"],
                   "the JSON run completes and delivers every byte it injected", cmd, r)
            expect("NaN" not in r.stdout, "no NaN in the JSON", cmd, r)
        except (ValueError, KeyError) as e:
            expect(False, f"--json prints the run's figures ({e})", cmd, r)
    elif "--sweep-nodes" in cmd:
        check_sweep(cmd, r, workdir)
    elif "--sweep-load" in cmd:
        check_load_sweep(cmd, r, workdir)
    else:
        check_text(cmd, comment, r)


def check_booksim(cmd, r):
    expect(r.returncode == 0, "the comparison runs without BookSim", cmd, r)
    cases = re.findall(r"^(\w+) +\d+ \|.*\| +- / ([0-9.]+) \|", r.stdout, re.M)
    wanted = re.search(r"--cases (\S+)", cmd)
    names = wanted.group(1).split(",") if wanted else ["mesh", "fattree", "crossbar"]
    expect([c for c, _ in cases] == names and all(abs(float(a) - 0.2) < 0.01 for _, a in cases),
           f"sansim's half: each case accepts the offered 0.2 ({cases})", cmd, r)


def scratch():
    d = tempfile.mkdtemp(prefix="sansim-docs-")
    os.makedirs(os.path.join(d, "build", "simulator"))
    os.symlink(sansim, os.path.join(d, "build", "simulator", "sansim"))
    if sortapp:
        os.makedirs(os.path.join(d, "build", "sortapp"))
        os.symlink(sortapp, os.path.join(d, "build", "sortapp", "sortapp"))
        os.symlink(sortgen, os.path.join(d, "build", "sortapp", "sortgen"))
    for sub in ("simulator", "tests"):
        os.symlink(os.path.join(source, sub), os.path.join(d, sub))
    return d


def main():
    with open(doc) as f:
        text = f.read()
    used, ran, skipped = set(), 0, set()
    workdir = scratch()
    try:
        for block, comment, cmd in commands(text):
            if cmd.startswith(SKIP) or not re.search(SANSIM_USERS, block):
                continue  # the build; blocks without sansim are other tools' examples
            if "build/sortapp/" in block and not sortapp:
                skipped.add(block)
                continue
            run = bounded(cmd, used)
            r = subprocess.run(["bash", "-c", run], cwd=workdir, capture_output=True, text=True,
                               timeout=300)
            ran += 1
            if run.startswith("build/simulator/sansim"):
                check_sansim(run, comment, r, workdir)
            elif "booksim_compare.py" in run:
                check_booksim(run, r)
            else:
                expect(r.returncode == 0, "the command succeeds", run, r)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for i, (old, _, why) in enumerate(BOUNDS):
        expect(i in used, f"the bound for '{old}' ({why}) matches a command in the page", old)
    expect(ran >= 10, f"the page's examples ran ({ran})", doc)
    for f in failures:
        print("FAIL:", f)
    if skipped:
        print(f"skipped {len(skipped)} block(s) that need sortapp (not built)")
    print(f"{checks - len(failures)} of {checks} checks on {ran} documented commands passed")
    return 1 if failures else 0


sys.exit(main())
