#!/usr/bin/env python3
"""The distributed sort under a real Slurm (scripts/slurm-local on this machine).

usage: slurm_test.py SOURCE_ROOT
Starts a private one-node Slurm cluster (its own directory and ports), then sorts with
  srun --mpi=pmix -n 5 sortapp job ...        (4 sort nodes, the last task the monitor)
  sbatch --wait docs/slurm/sort.sbatch ...     (the documented batch script, PMIx found by
                                                libmsg's automatic bootstrap choice)
and validates each with sortcheck: the node-order concatenation of the outputs is sorted and
holds the inputs' records and checksum; the monitor's report counts 4 nodes. `srun -n 2`
without --mpi=pmix is refused by every task, naming the launcher and what to use instead. The cluster is
stopped at the end, also on failure. Binaries come from SORTAPP_BIN, SORTGEN_BIN and
SORTCHECK_BIN. Exit 77 (skipped) when not root or Slurm is not installed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures, slurp  # noqa: E402
from local_cluster import cluster_env  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]
NODES = 4


def run(cmd, what, **kw):
    """subprocess.run with a bound; an overrun is a failure (the job is left to the stop)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300 * SLOW, **kw)
    except subprocess.TimeoutExpired:
        check(False, f"{what}: still running after {300 * SLOW} s")
        return None


def generate(d, sizes, dist, seed):
    first = 0
    for k, n in enumerate(sizes):
        subprocess.run([SORTGEN, "--distribution", dist, "--seed", str(seed), "--first",
                        str(first), str(n), f"{d}/in.{k}"], check=True, capture_output=True)
        first += n


def summary(files):
    r = subprocess.run([SORTCHECK, "--json", *files], capture_output=True, text=True)
    return json.loads(r.stdout)


def validate(d, what, report_text):
    """The outputs against the inputs, and the monitor's JSON report (its last line)."""
    want = summary([f"{d}/in.{k}" for k in range(NODES)])
    outputs = [f"{d}/out.{k}" for k in range(NODES)]
    missing = [f for f in outputs if not os.path.exists(f)]
    if not check(not missing, f"{what}: outputs missing: {missing}"):
        return
    got = summary(outputs)
    check(got["sorted"], f"{what}: outputs not sorted (first unordered {got['first_unordered']})")
    check(got["records"] == want["records"],
          f"{what}: {got['records']} records out, {want['records']} in")
    check(got["checksum"] == want["checksum"],
          f"{what}: checksum {got['checksum']} out, {want['checksum']} in")
    lines = [ln for ln in report_text.splitlines() if ln.startswith("{")]
    if not check(lines, f"{what}: no JSON report in the job's output: {report_text[-1500:]!r}"):
        return
    report = json.loads(lines[-1])
    parts = report["partition_records"]
    check(report["nodes"] == NODES and len(parts) == NODES and sum(parts) == want["records"],
          f"{what}: the report says {report['nodes']} nodes, partitions {parts}")


def run_srun(d, env):
    generate(d, [9000, 0, 12000, 3001], "skewed", seed=11)
    cmd = ["srun", "--mpi=pmix", "-n", str(NODES + 1), "--job-name=viaduct-srun-test",
           SORTAPP, "job", "--input", f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}",
           "--memory", "16M", "--json"]
    # Forced, so that a job which does not get PMIx fails here instead of falling back.
    r = run(cmd, "srun", env=dict(env, VIADUCT_BOOTSTRAP="pmix"))
    if r is None or not check(r.returncode == 0, f"srun: exit {r.returncode}: {r.stderr[-3000:]}"):
        return
    validate(d, "srun --mpi=pmix", r.stdout)
    print("srun --mpi=pmix -n 5 sortapp job: sorted and validated", flush=True)


def run_srun_without_pmix(d, env):
    """srun -n 2 without --mpi=pmix gives the tasks no way to meet: libmsg refuses to run each
    alone as a job of one (which would report success twice), and says how to start them."""
    generate(d, [100, 100], "uniform", seed=13)
    cmd = ["srun", "-n", "2", "--job-name=viaduct-srun-nopmix", SORTAPP, "job", "--input",
           f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}", "--memory", "16M"]
    r = run(cmd, "srun without --mpi=pmix",
            env={k: v for k, v in env.items() if k != "VIADUCT_BOOTSTRAP"})
    if r is None:
        return
    check(r.returncode != 0 and "started by srun without --mpi=pmix" in r.stderr and
          "srun --mpi=pmix" in r.stderr,
          f"srun -n 2 without PMIx: exit {r.returncode}: {r.stderr[-3000:]}")
    check(not os.path.exists(f"{d}/out.0"), "an output was written by a job of one")
    print("srun -n 2 without --mpi=pmix: refused, naming it", flush=True)


def run_sbatch(d, env, root):
    generate(d, [20000, 7001, 13, 15000], "uniform", seed=12)
    out = f"{d}/job.out"
    cmd = ["sbatch", "--wait", f"--output={out}", f"--chdir={d}",
           os.path.join(root, "docs", "slurm", "sort.sbatch"), f"{d}/in.{{rank}}",
           f"{d}/out.{{rank}}", "--memory", "16M", "--json"]
    # The job gets this environment (sbatch's default --export=ALL): SORTAPP names the program;
    # VIADUCT_BOOTSTRAP is unset so that libmsg finds PMIx by itself.
    job_env = {k: v for k, v in env.items() if k != "VIADUCT_BOOTSTRAP"}
    r = run(cmd, "sbatch --wait", env=dict(job_env, SORTAPP=SORTAPP))
    text = slurp(out)
    if r is None or not check(r.returncode == 0, f"sbatch --wait: exit {r.returncode}: "
                              f"{r.stderr[-1500:]}\njob output:\n{text[-3000:]}"):
        return
    validate(d, "sbatch docs/slurm/sort.sbatch", text)
    print("sbatch --wait docs/slurm/sort.sbatch: sorted and validated", flush=True)


def main():
    root = sys.argv[1]
    # meson ends a test that overran with SIGTERM: stop the daemons (they are in a session of
    # their own, out of reach of that signal) on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("slurm_test: terminated"))
    if os.geteuid() != 0:
        print("not root: the local Slurm daemons run as root: skipped")
        return SKIP
    for tool in ["srun", "sbatch", "slurmctld", "slurmd", "munged"]:
        if shutil.which(tool) is None:
            print(f"{tool} not found (scripts/setup.sh installs Slurm): skipped")
            return SKIP
    d = tempfile.mkdtemp(prefix="viaduct-slurm-test-")
    slurm_dir = f"{d}/slurm"
    env = cluster_env(slurm_dir)
    control = os.path.join(root, "scripts", "slurm-local")
    try:
        r = subprocess.run([control, "start"], capture_output=True, text=True, env=env,
                           timeout=120 * SLOW)
        print(r.stdout, r.stderr, flush=True)
        if check(r.returncode == 0, f"slurm-local start: exit {r.returncode}"):
            for name, fn in [("srun", lambda s: run_srun(s, env)),
                             ("nopmix", lambda s: run_srun_without_pmix(s, env)),
                             ("sbatch", lambda s: run_sbatch(s, env, root))]:
                sub = f"{d}/{name}"
                os.mkdir(sub)
                fn(sub)
    finally:
        r = subprocess.run([control, "stop"], capture_output=True, text=True, env=env,
                           timeout=60 * SLOW)
        check(r.returncode == 0, f"slurm-local stop: exit {r.returncode}: {r.stderr}")
        r = subprocess.run([control, "status"], capture_output=True, text=True, env=env,
                           timeout=60 * SLOW)
        check(r.returncode == 1, f"slurm-local status after stop: exit {r.returncode}: {r.stdout}")
        logs = f"{slurm_dir}/log"
        if failures and os.path.isdir(logs):
            for log in sorted(os.listdir(logs)):
                print(f"--- {log}:\n{slurp(f'{logs}/{log}')[-3000:]}")
        shutil.rmtree(d, ignore_errors=True)
    print(f"slurm: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
