#!/usr/bin/env python3
"""End-to-end tests of the distributed sort (`sortapp run` / `sortapp job`).

usage: cluster_test.py SCENARIO
Scenarios: distributions, formats, bad_input, killed, disk_full, mpirun, netns, malformed,
river (the river algorithm: every distribution x one and two passes), river_faults,
remeasure, timeline (--timeline, --sample-hz and the needles in the report).
Binaries come from SORTAPP_BIN, SORTGEN_BIN, SORTCHECK_BIN (and VIADUCT_MSGRUN for netns and
malformed, ROGUE_NODE_BIN for malformed).
Every sort is validated by sortcheck: the node-order concatenation of the outputs is sorted,
holds as many records as the inputs, and has the inputs' order-independent checksum; the
report's partition sizes differ by at most one record. Exit 77 means skipped (meson's code).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]


def generate(d, sizes, dist, seed=5, rec=100, key=10):
    """Node k's input: sizes[k] records numbered from sum(sizes[:k])."""
    first = 0
    for k, n in enumerate(sizes):
        subprocess.run([SORTGEN, "--distribution", dist, "--seed", str(seed), "--first",
                        str(first), "--record-size", str(rec), "--key-size", str(key), str(n),
                        f"{d}/in.{k}"], check=True, capture_output=True)
        first += n


def summary(files, rec=100, key=10):
    r = subprocess.run([SORTCHECK, "--json", "--record-size", str(rec), "--key-size", str(key),
                        *files], capture_output=True, text=True)
    return json.loads(r.stdout)


def sort_and_validate(d, nodes, what, rec=100, key=10, extra=(), balance=None):
    """balance None: partitions differ by at most one record (exact selection, or a river sort
    whose sample held every record); else the largest is within that fraction of the mean."""
    inputs = [f"{d}/in.{k}" for k in range(nodes)]
    outputs = [f"{d}/out.{k}" for k in range(nodes)]
    want = summary(inputs, rec, key)
    started = time.time()
    r = subprocess.run([SORTAPP, "run", "-n", str(nodes), "--input", f"{d}/in.{{rank}}",
                        "--output", f"{d}/out.{{rank}}", "--record-size", str(rec),
                        "--key-size", str(key), "--json", "--timeout", str(300 * SLOW), *extra],
                       capture_output=True, text=True, timeout=400 * SLOW)
    wall = time.time() - started
    if not check(r.returncode == 0, f"{what}: sortapp run exit {r.returncode}: {r.stderr[-2000:]}"):
        return None
    report = json.loads(r.stdout.strip().splitlines()[-1])
    check_startup(report, wall, what)
    got = summary(outputs, rec, key)
    check(got["sorted"], f"{what}: outputs not sorted (first unordered {got['first_unordered']})")
    check(got["records"] == want["records"], f"{what}: {got['records']} records out, "
          f"{want['records']} in")
    check(got["checksum"] == want["checksum"], f"{what}: checksum {got['checksum']} out, "
          f"{want['checksum']} in")
    parts = report["partition_records"]
    even = (max(parts) - min(parts) <= 1 if balance is None else
            max(parts) <= (1 + balance) * sum(parts) / nodes) if parts else False
    check(len(parts) == nodes and sum(parts) == want["records"] and even,
          f"{what}: partition sizes {parts}")
    for k, f in enumerate(outputs):
        check(os.path.getsize(f) == parts[k] * rec, f"{what}: out.{k} holds "
              f"{os.path.getsize(f)} bytes, partition {parts[k]} records")
    check_cpu_per_gb(report, what)
    check_peak_rss(report, nodes, what)
    return report


def check_peak_rss(report, nodes, what):
    """Each node's peak resident memory is its counter samples' largest: a whole process's
    (above 1 MB), and the job's largest and total are the nodes' maximum and sum."""
    per = [n["peak_rss_bytes"] for n in report["per_node"]]
    got = report["peak_rss_bytes"]
    check(len(per) == nodes and all(b > 1 << 20 for b in per) and got["largest"] == max(per) and
          got["total"] == sum(per), f"{what}: peak resident memory {got}, per node {per}")


def check_startup(report, wall, what):
    """The start-up figures count from sortapp run's start: the job joined, then the first
    order, then the commit, all within the run's wall time as this test saw it."""
    s = report.get("startup")
    if not check(s is not None, f"{what}: no start-up figures in the report"):
        return
    check(0 < s["joined_s"] <= s["first_order_s"] <= s["committed_s"] <= wall + 0.05,
          f"{what}: start-up {s}, run's wall time {wall:.3f} s")


def check_cpu_per_gb(report, what):
    """The report's CPU-seconds per GB: the job's is the nodes' plus the monitor's; the nodes'
    whole processes took at least what their phases did; every phase of the table is there.
    Nothing sorted: all 0."""
    cpu = report["cpu_seconds_per_gb"]
    phases = {p["phase"] for n in report["per_node"] for p in n["phases"]}
    if report["records"] == 0:
        check(cpu["total"] == 0 and not cpu["phases"], f"{what}: CPU per GB of nothing: {cpu}")
        return
    check(cpu["nodes"] > 0 and cpu["monitor"] >= 0 and
          abs(cpu["total"] - cpu["nodes"] - cpu["monitor"]) <= 0.002 and
          cpu["nodes"] >= sum(cpu["phases"].values()) - 0.001 * (1 + len(cpu["phases"])) and
          set(cpu["phases"]) == phases and all(v >= 0 for v in cpu["phases"].values()),
          f"{what}: CPU per GB {cpu}, phases {sorted(phases)}")


def scenario_distributions(d):
    # Uneven node sizes, one node with no records at all.
    for dist in ["uniform", "skewed", "equal", "few", "sorted", "reverse"]:
        sub = tempfile.mkdtemp(dir=d)
        generate(sub, [20000, 0, 7001, 13], dist)
        rep = sort_and_validate(sub, 4, f"{dist}, sizes 20000/0/7001/13")
        if rep:
            print(f"{dist}: {rep['records']} records, phase 3a {rep['phase_3a']['rounds']} rounds, "
                  f"{rep['seconds']:.2f} s", flush=True)
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [0, 0, 0], "uniform")
    sort_and_validate(sub, 3, "all nodes empty")
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [4000, 9000, 1, 0, 5000, 2500, 7777], "skewed")
    sort_and_validate(sub, 7, "7 nodes, skewed, uneven")
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [12345, 54321], "sorted")
    sort_and_validate(sub, 2, "2 nodes, pre-sorted")
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [3001], "skewed")
    sort_and_validate(sub, 1, "one node")


def river_sort(sub, nodes, what, passes, balance=None, extra=()):
    rep = sort_and_validate(sub, nodes, f"{what}, river, {passes} pass(es)", balance=balance,
                            extra=["--algorithm", "river", "--passes", str(passes), *extra])
    if rep:
        one = rep["one_pass_nodes"]
        check(rep["algorithm"] == "river" and one == (nodes if passes == 1 else 0),
              f"{what}: {one} of {nodes} nodes in one pass with --passes {passes}")
        phases = [p["phase"] for p in rep["per_node"][0]["phases"]]
        check(phases == ["river", "sort+write" if passes == 1 else "merge"],
              f"{what}: phases {phases}")
        print(f"river {what}, {passes} pass(es): {rep['records']} records, balance "
              f"{rep['balance']:.4f}, {rep['seconds']:.2f} s", flush=True)
    return rep


def scenario_river(d):
    # Every distribution, uneven sizes and an empty node: fewer records than the sample, so
    # every record is sampled and the partitions are exact. Sanitizer builds (SLOW > 1), where
    # each sort takes many times longer, run three of the six: the release build runs all.
    dists = ["uniform", "skewed", "equal", "few", "sorted", "reverse"]
    for dist in dists if SLOW == 1 else ["uniform", "equal", "reverse"]:
        for passes in (1, 2):
            sub = tempfile.mkdtemp(dir=d)
            generate(sub, [20000, 0, 7001, 13], dist)
            river_sort(sub, 4, f"{dist}, sizes 20000/0/7001/13", passes)
    # Sampled (more records than samples): within 5% of the mean, whatever the keys.
    for dist in ["uniform", "skewed", "equal", "few"] if SLOW == 1 else ["skewed", "few"]:
        sub = tempfile.mkdtemp(dir=d)
        generate(sub, [60000, 45000, 0, 30000], dist)
        river_sort(sub, 4, f"{dist}, 135000 records", 2 if dist == "few" else 1, balance=0.05)
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [0, 0, 0], "uniform")
    river_sort(sub, 3, "all nodes empty", 1)
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [4000, 9000, 1, 0, 5000, 2500, 7777], "skewed")
    river_sort(sub, 7, "7 nodes, skewed, uneven", 2)
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [3001], "skewed")
    river_sort(sub, 1, "one node", 1)
    # 80-byte records, a small budget: runs of what arrives, then the merge (auto).
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [60000, 50000, 55000], "uniform", rec=80, key=8)
    rep = sort_and_validate(sub, 3, "river, 80/8 records, 4M budget", rec=80, key=8,
                            balance=0.05, extra=["--algorithm", "river", "--memory", "4M"])
    check(rep is not None and rep["one_pass_nodes"] == 0,
          "a 4M budget below the share did not give two passes")


def scenario_river_faults(d):
    # One pass forced where the share does not fit: a named error, nothing left.
    generate(d, [100000, 100000, 100000], "uniform")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}", "--algorithm", "river", "--passes", "1",
                        "--memory", "4M"], capture_output=True, text=True, timeout=120 * SLOW)
    check(r.returncode != 0 and "one pass" in r.stderr and "--passes 2" in r.stderr,
          f"--passes 1 over budget: exit {r.returncode}, stderr {r.stderr[-1500:]!r}")
    left = [n for n in os.listdir(d) if not n.startswith("in.")]
    check(not left, f"--passes 1 over budget: left {left}")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}", "--algorithm", "sideways"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 2 and "three-phase or river" in r.stderr,
          f"--algorithm sideways: exit {r.returncode}, stderr {r.stderr!r}")
    # A node killed while the records flow: the job fails naming it, nothing is left.
    generate(d, [400000, 400000, 400000], "uniform")
    kill_node_during(d, "river")


def scenario_formats(d):
    # The paper's 80-byte records with 8-byte keys, several runs per node (small memory).
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [30000, 25000, 28000], "uniform", rec=80, key=8)
    sort_and_validate(sub, 3, "80/8 records, multi-run", rec=80, key=8,
                      extra=["--memory", "2M", "--block", "64K", "--depth", "3"])
    sub = tempfile.mkdtemp(dir=d)
    generate(sub, [30000, 25000], "skewed")
    sort_and_validate(sub, 2, "sendrecv protocol, restricted", extra=[
        "--protocol", "sendrecv", "--restricted"])


def scenario_bad_input(d):
    generate(d, [1000, 1000, 1000], "uniform")
    os.remove(f"{d}/in.1")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}"], capture_output=True, text=True, timeout=60 * SLOW)
    check(r.returncode == 2 and f"{d}/in.1" in r.stderr and "missing" in r.stderr,
          f"missing partition: exit {r.returncode}, stderr {r.stderr!r}")
    generate(d, [1000, 1000, 1000], "uniform")
    with open(f"{d}/in.2", "ab") as f:
        f.write(b"1234567")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}"], capture_output=True, text=True, timeout=60 * SLOW)
    check(r.returncode == 2 and "node 2" in r.stderr and "100007 bytes" in r.stderr,
          f"truncated partition: exit {r.returncode}, stderr {r.stderr!r}")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/in.{{rank}}"], capture_output=True, text=True, timeout=60 * SLOW)
    check(r.returncode == 2 and "never overwrites an input" in r.stderr,
          f"output = input: exit {r.returncode}, stderr {r.stderr!r}")
    # A --job-id reused while an earlier job's directory is still there: the job fails, and
    # what it did not create stays.
    generate(d, [1000, 1000, 1000], "uniform")
    old = f"{d}/.sortapp-job-reused-1"
    os.mkdir(old)
    with open(f"{old}/work", "w") as f:
        f.write("an earlier job's")
    r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}", "--job-id", "reused"], capture_output=True,
                       text=True, timeout=120 * SLOW)
    check(r.returncode != 0 and "node 1" in r.stderr,
          f"reused job id: exit {r.returncode}, stderr {r.stderr[-1500:]!r}")
    check(os.path.exists(f"{old}/work"), "a failed job removed a directory it did not create")
    left = [n for n in os.listdir(d) if n.startswith("out.") or n.startswith(".out.")]
    check(not left, f"reused job id: left {left}")
    shutil.rmtree(old)
    for args, needle in [(["run", "--input", "x", "--output", "y"], "-n N is required"),
                         (["run", "-n", "0", "--input", "x", "--output", "y"], "--nodes"),
                         (["run", "-n", "2", "--output", "y"], "--input and --output"),
                         (["run", "-n", "2", "--input", "x", "--output", "y", "--bogus"],
                          "unknown option --bogus"),
                         (["job", "--input", "x", "--output", "y", "--key-size", "200"], "key")]:
        r = subprocess.run([SORTAPP, *args], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and needle in r.stderr and len(r.stderr.splitlines()) == 1,
              f"{args}: exit {r.returncode}, stderr {r.stderr!r}")
    check(not any(n.startswith("out") for n in os.listdir(d)), "bad input left output files")
    check_job_program(d)


def check_job_program(d):
    """Only sortapp-job loads the fabric: sortapp's other commands start without libfabric's
    load-time costs. `sortapp job` becomes sortapp-job, and names it when it is missing."""
    job = os.path.join(os.path.dirname(SORTAPP), "sortapp-job")
    libs = {p: subprocess.run(["ldd", p], capture_output=True, text=True).stdout
            for p in (SORTAPP, job)}
    check("libfabric" not in libs[SORTAPP] and "libmsg" not in libs[SORTAPP],
          f"sortapp loads the fabric: {libs[SORTAPP]}")
    check("libmsg" in libs[job], f"sortapp-job does not link libmsg: {libs[job]}")
    r = subprocess.run([SORTAPP, "job", "--help"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "--launched-at-us" in r.stdout,
          f"sortapp job --help: exit {r.returncode}, {r.stdout[:300]!r} {r.stderr[-300:]!r}")
    alone = os.path.join(d, "alone")
    os.mkdir(alone)
    shutil.copy(SORTAPP, alone)
    env = {k: v for k, v in os.environ.items() if k != "VIADUCT_SORTAPP_JOB"}
    env["PATH"] = alone
    r = subprocess.run([os.path.join(alone, "sortapp"), "job", "--help"], capture_output=True,
                       text=True, timeout=60, env=env)
    check(r.returncode == 1 and "cannot find sortapp-job" in r.stderr,
          f"sortapp job without sortapp-job: exit {r.returncode}, stderr {r.stderr!r}")
    shutil.rmtree(alone)


def kill_node_during(d, phase, more=(), linger=0.0):
    """Kills node 1 in `phase`: SORTAPP_TEST_HOLD makes it write its pid to a file and wait
    at the start of the phase, so the kill never races the phase's end. Over tcp: libfabric's
    shm can wedge survivors of a rank killed mid-transfer (docs/libmsg.md). `more`: further
    options; `linger`: seconds node 1 stays held before the kill. Returns the job's stderr."""
    at = {"local": "phase 1", "merge": "phase 3b", "river": "river"}[phase]
    extra = (["--algorithm", "river"] if phase == "river" else []) + list(more)
    held = f"{d}/held"
    env = dict(os.environ, SORTAPP_TEST_HOLD=f"node 1|{at}|{held}")
    proc = subprocess.Popen([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}",
                             "--output", f"{d}/out.{{rank}}", "--provider", "tcp;ofi_rxm",
                             "--memory", "8M", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60 * SLOW
    while time.time() < deadline and proc.poll() is None and not os.path.exists(held):
        time.sleep(0.01)
    if not check(os.path.exists(held), f"node 1 never reached {at}"):
        proc.kill()
        proc.communicate()
        return ""
    time.sleep(linger)
    with open(held) as f:
        victim = int(f.read())
    os.kill(victim, signal.SIGKILL)
    os.remove(held)
    try:
        out, err = proc.communicate(timeout=120 * SLOW)
    except subprocess.TimeoutExpired:
        proc.kill()
        check(False, "the job hung after a node was killed")
        return ""
    check(proc.returncode != 0, f"{phase}: the job reported success with a node killed")
    step = {"local": "phases 1 and 2", "merge": "phase 3b", "river": "river sort"}[phase]
    check("node 1" in err and step in err,
          f"{phase}: the error does not name the dead node and the phase: {err[-1500:]!r}")
    # `sortapp run` removes what the killed node could not (its job directory, its temporary
    # output): nothing but the inputs is left.
    left = [n for n in os.listdir(d) if not n.startswith("in.") and n != "timeline"]
    check(not left, f"{phase}: a failed job left files: {left}")
    return err


def scenario_killed(d):
    # Big enough that each phase lasts a moment on this machine.
    generate(d, [400000, 400000, 400000], "uniform")
    kill_node_during(d, "local")
    kill_node_during(d, "merge")


def scenario_disk_full(d):
    small = f"{d}/small"
    os.mkdir(small)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", small],
                      capture_output=True).returncode != 0:
        print("cannot mount a small tmpfs here (needs root): skipped")
        return SKIP
    try:
        generate(d, [50000, 50000, 50000], "uniform")
        # Node 1's scratch is the 2 MiB tmpfs: its runs and work file cannot fit.
        os.mkdir(f"{d}/scratch0")
        os.symlink(small, f"{d}/scratch1")
        os.mkdir(f"{d}/scratch2")
        r = subprocess.run([SORTAPP, "run", "-n", "3", "--input", f"{d}/in.{{rank}}", "--output",
                            f"{d}/out.{{rank}}", "--scratch", f"{d}/scratch{{rank}}",
                            "--memory", "2M"], capture_output=True, text=True, timeout=120 * SLOW)
        check(r.returncode != 0, "the job reported success with a full disk")
        check("node 1" in r.stderr and "space" in r.stderr.lower(),
              f"the error does not name the node and the full disk: {r.stderr[-1500:]!r}")
        check(not [n for n in os.listdir(d) if n.startswith("out")],
              "a failed job left output files")
        check(os.listdir(small) == [], f"node 1 left files on its scratch: {os.listdir(small)}")
    finally:
        subprocess.run(["umount", small], capture_output=True)


def scenario_mpirun(d):
    if shutil.which("mpirun") is None:
        print("mpirun not found (Debian: openmpi-bin): skipped")
        return SKIP
    generate(d, [9000, 12000, 3000], "skewed")
    want = summary([f"{d}/in.{k}" for k in range(3)])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpirun", "-n", "4", "--oversubscribe", "-x", "VIADUCT_BOOTSTRAP=pmix",
                        SORTAPP, "job", "--input", f"{d}/in.{{rank}}", "--output",
                        f"{d}/out.{{rank}}", "--memory", "16M", "--json"],
                       capture_output=True, text=True, timeout=300 * SLOW, env=env)
    if not check(r.returncode == 0, f"mpirun: exit {r.returncode}: {r.stderr[-2000:]}"):
        return
    got = summary([f"{d}/out.{k}" for k in range(3)])
    check(got["sorted"] and got["checksum"] == want["checksum"] and
          got["records"] == want["records"], f"mpirun: outputs {got} vs inputs {want}")


def scenario_netns(d):
    script = os.environ["NETNS_SCRIPT"]
    msgrun = os.environ["VIADUCT_MSGRUN"]
    wrapper = f"{d}/rank.sh"
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nshift\n"$@" && echo "[rank $VIADUCT_RANK] PASS sortjob"\n')
    os.chmod(wrapper, 0o755)
    generate(d, [15000, 15000, 1], "uniform")
    want = summary([f"{d}/in.{k}" for k in range(3)])
    r = subprocess.run([script, "4", str(120), msgrun, wrapper, "sortjob", SORTAPP, "job",
                        "--input", f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}",
                        "--memory", "16M"], capture_output=True, text=True, timeout=300 * SLOW)
    if r.returncode == SKIP:
        print(r.stdout)
        return SKIP
    if not check(r.returncode == 0, f"netns: exit {r.returncode}: {r.stdout[-3000:]}"):
        return
    got = summary([f"{d}/out.{k}" for k in range(3)])
    check(got["sorted"] and got["checksum"] == want["checksum"] and
          got["records"] == want["records"], f"netns: outputs {got} vs inputs {want}")


def scenario_malformed(d):
    """Node 1 is rogue_node, which answers phase 3a with replies the monitor must refuse: the
    job ends the normal way for a failure (every node aborts and removes what it created) with
    the monitor naming the node, the step and the cause."""
    msgrun = os.environ["VIADUCT_MSGRUN"]
    rogue = os.environ["ROGUE_NODE_BIN"]
    generate(d, [3000, 0, 2000], "uniform")
    cases = [("samples-outside", "phase 3a sampling", "a sample outside its window"),
             ("samples-garbage", "phase 3a sampling", "not one encoding of the reply"),
             ("counts-outside", "phase 3a counting", ""),
             ("counters-outside", "checking", "a sample in phase 5 of a table of 1 phase names")]
    for mode, step, cause in cases:
        wrapper = f"{d}/rank.sh"
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nif [ "$VIADUCT_RANK" = 1 ]; then exec "{rogue}" {mode}; fi\n'
                    f'exec "{SORTAPP}" job --input "{d}/in.{{rank}}" --output "{d}/out.{{rank}}" '
                    f'--memory 16M --stall-timeout 10 --job-id malformed\n')
        os.chmod(wrapper, 0o755)
        r = subprocess.run([msgrun, "-n", "4", "--timeout", str(120 * SLOW), "--", wrapper],
                           capture_output=True, text=True, timeout=200 * SLOW)
        err = r.stderr
        check(r.returncode not in (0, 124), f"{mode}: msgrun exit {r.returncode}")
        named = f"the sort failed: node 1, {step}: a malformed answer"
        check(named in err and cause in err.split(named, 1)[-1].split("\n", 1)[0],
              f"{mode}: the monitor does not name node 1, {step} and the cause: {err[-2000:]!r}")
        check("terminate" not in err, f"{mode}: a process ended in std::terminate: {err[-2000:]!r}")
        check(err.count(f"the job was aborted (node 1, {step}") >= 2,
              f"{mode}: the nodes did not hear the abort: {err[-2000:]!r}")
        check("every node removed what it created" in err,
              f"{mode}: the monitor did not finish the abort: {err[-2000:]!r}")
        left = [n for n in os.listdir(d) if not n.startswith("in.") and n != "rank.sh"]
        check(not left, f"{mode}: a failed job left files: {left}")
        print(f"{mode}: exit {r.returncode}", flush=True)


def timeline_rows(tl, what):
    """The rows of tl/timeline.jsonl by node, after checking that the four files are there."""
    names = ["timeline.jsonl", "timeline.csv", "timeline.png", "timeline.html"]
    missing = [n for n in names if not os.path.isfile(os.path.join(tl, n))]
    if not check(not missing, f"{what}: the timeline lacks {missing}"):
        return {}
    rows = {}
    with open(os.path.join(tl, "timeline.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            rows.setdefault(row["node"], []).append(row)
    for node, got in rows.items():
        times = [r["t"] for r in got]
        check(all(a <= b for a, b in zip(times, times[1:])),
              f"{what}: node {node}'s samples are out of time order")
        check(all(r["phase"] for r in got), f"{what}: node {node} has a sample with no phase")
    return rows


def timeline_sorts(d):
    """A 4-node sort with each algorithm writes its timeline: samples from every node, in
    time order, in named phases; the JSON report holds the needles, the page the text report."""
    generate(d, [20000, 15000, 25000, 10000], "uniform")
    # The river samples 30,000 of the 70,000 keys: its partitions are within 5% of the mean.
    for algorithm, phase, balance in [("three-phase", "phase 3b", None), ("river", "river", 0.05)]:
        tl = f"{d}/timeline-{algorithm}"
        rep = sort_and_validate(d, 4, f"timeline, {algorithm}", balance=balance,
                                extra=["--algorithm", algorithm, "--timeline", tl])
        if not rep:
            continue
        check(isinstance(rep.get("needles"), list), f"{algorithm}: no needles list: {rep}")
        for needle in rep.get("needles", []):
            check(set(needle) >= {"node", "phase", "ratio", "cause", "text", "figures"},
                  f"{algorithm}: a needle lacks a field: {needle}")
        check(len(rep.get("counter_samples", [])) == 4, f"{algorithm}: counter_samples")
        rows = timeline_rows(tl, algorithm)
        check(sorted(rows) == [0, 1, 2, 3], f"{algorithm}: samples from nodes {sorted(rows)}")
        phases = {r["phase"] for got in rows.values() for r in got}
        check(phase in phases, f"{algorithm}: no sample in {phase}: {phases}")
        with open(f"{tl}/timeline.html") as f:
            page = f.read()
        check("needles: none" in page or "needle: node" in page,
              f"{algorithm}: the page does not hold the report's needle lines")
        print(f"timeline, {algorithm}: {sum(len(v) for v in rows.values())} samples, "
              f"phases {sorted(phases)}, needles {len(rep['needles'])}", flush=True)


def timeline_of_killed_job(d):
    """Node 1 is held in phase 1 past two liveness questions, then killed: the failed job
    still writes its timeline, with node 1's samples up to its death."""
    generate(d, [50000, 50000, 50000], "uniform")
    tl = f"{d}/timeline"
    # A stall timeout of 8 s asks every 2 s whether each node is there.
    err = kill_node_during(d, "local", ["--timeline", tl, "--stall-timeout", "8"], 5.0)
    check(f"the timeline of what arrived is in {tl}" in err,
          f"killed: the monitor does not say where the timeline is: {err[-1500:]!r}")
    rows = timeline_rows(tl, "killed")
    dead = [r["phase"] for r in rows.get(1, [])]
    check("phase 1" in dead, f"killed: node 1's samples stop before its last phase: {set(dead)}")
    print(f"timeline, killed: node 1 sent {len(dead)} samples", flush=True)


def timeline_refusals(d):
    """--sample-hz outside 0.1 to 100 and a --timeline directory the timeline may not be written
    in are refused before anything starts, in one line naming the problem; a timeline that
    cannot be drawn after the sort fails the command with status 3 but keeps the outputs."""
    generate(d, [3000, 2000], "uniform")
    base = ["run", "-n", "2", "--input", f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}"]
    shared = f"{d}/shared"
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    for extra, said in [(["--sample-hz", "0"], "--sample-hz: 0 is outside 0.1 to 100"),
                        (["--sample-hz", "101"], "--sample-hz: 101 is outside 0.1 to 100"),
                        (["--timeline", shared], "writable by every user and not sticky"),
                        (["--timeline", f"{d}/in.0"], "is not a directory")]:
        r = subprocess.run([SORTAPP, *base, *extra], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1,
              f"{extra}: exit {r.returncode}, stderr {r.stderr!r}")
    # No gnuplot on the PATH: the timeline cannot be drawn once the sort is done.
    env = dict(os.environ, PATH=shared)
    r = subprocess.run([SORTAPP, *base, "--timeline", f"{d}/undrawn"], capture_output=True,
                       text=True, timeout=300 * SLOW, env=env)
    check(r.returncode == 3 and "gnuplot" in r.stderr and "outputs are in place" in r.stderr,
          f"no gnuplot: exit {r.returncode}, stderr {r.stderr[-1500:]!r}")
    got = summary([f"{d}/out.0", f"{d}/out.1"])
    check(got["sorted"] and got["records"] == 5000, f"no gnuplot: outputs {got}")


def scenario_timeline(d):
    for step in (timeline_sorts, timeline_of_killed_job, timeline_refusals):
        sub = tempfile.mkdtemp(dir=d)
        step(sub)


def cached_disk_dates(cache):
    with open(cache) as f:
        doc = json.load(f)
    return {dev: e["conditions"]["measured_at"] for dev, e in doc["devices"].items()}


def scenario_remeasure(d):
    # The nodes keep their disk figures in the cache with the conditions; --remeasure (handed
    # from `run` to every `job`) measures again, so the cached date changes. The report says,
    # per phase, whether the phase beat its expectation (a stale figure).
    cache_home = os.path.join(d, "cache")
    os.environ["XDG_CACHE_HOME"] = cache_home
    cache = os.path.join(cache_home, "viaduct", "sortapp-disk.json")
    generate(d, [3000, 2000], "uniform")
    rep = sort_and_validate(d, 2, "first run")
    if not rep or not check(os.path.exists(cache), "no disk cache written"):
        return 0
    first = cached_disk_dates(cache)
    check(len(first) == 1, f"one device expected in the cache: {first}")
    check(isinstance(rep.get("stale_figures"), list), "the report has no stale_figures list")
    for node in rep["per_node"]:
        check(node.get("disk_mixed_mb_s", 0) > 0, f"no mixed disk rate for a node: {node}")
        for ph in node["phases"]:
            check(isinstance(ph.get("stale_figure"), bool), f"phase without stale_figure: {ph}")
    rep = sort_and_validate(d, 2, "--remeasure", extra=["--remeasure"])
    if rep:
        again = cached_disk_dates(cache)
        for dev, t in first.items():
            check(again.get(dev, 0) > t, f"--remeasure left device {dev}'s date at {t}")
        print(f"remeasure: cache dates {first} -> {again}", flush=True)
    return 0


def main():
    scenario = sys.argv[1]
    fn = globals().get(f"scenario_{scenario}")
    if fn is None:
        print(f"unknown scenario {scenario}")
        return 2
    d = tempfile.mkdtemp(prefix=f"sortapp-{scenario}-")
    try:
        rc = fn(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if rc == SKIP and not failures:
        return SKIP
    print(f"{scenario}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
