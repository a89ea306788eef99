#!/usr/bin/env python3
"""scripts/slurm-local started and stopped again and again, as an operator does.

usage: start_stop_test.py SOURCE_ROOT [CYCLES]
Each of CYCLES (default 20) rounds, in a private directory on free ports: `start` exits 0 and
the node is idle, `status` exits 0, `start` again exits 0 ("already running", in the first
round), `stop` exits 0, `status` then exits 1, and no process of that cluster is left.
Before the first round the daemons' records name other processes (as after a reboot, their
pids taken by others): `status` says not running, `start` starts the cluster, and those
processes are left alone. Exit 77 (skipped) when not root or Slurm is not installed.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures, slurp  # noqa: E402
from local_cluster import cluster_env  # noqa: E402


def leftovers(slurm_dir):
    """Processes whose command line names the private directory (the cluster's daemons)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if slurm_dir in cmd:
            found.append(f"{pid}: {cmd.strip()}")
    return found


def control(script, env, *args):
    r = subprocess.run([script, *args], capture_output=True, text=True, env=env,
                       timeout=120 * SLOW)
    return r.returncode, (r.stdout + r.stderr).strip()


def plant_stale_records(slurm_dir):
    """Records of the three daemons that name live processes which are not those daemons."""
    os.makedirs(f"{slurm_dir}/run")
    strangers = []
    for name in ["munged", "slurmctld", "slurmd"]:
        p = subprocess.Popen(["sleep", "3600"])
        strangers.append(p)
        with open(f"{slurm_dir}/run/{name}.pid", "w") as f:
            f.write(f"{p.pid}\n")
    return strangers


class Skipped(Exception):
    pass


def cycle(n, script, env, slurm_dir):
    """One round; False once a step failed (the stop in main's finally cleans up)."""
    code, out = control(script, env, "start")
    if n == 1 and code == 3:  # a missing package, which slurm-local names
        raise Skipped(out)
    if not check(code == 0, f"round {n}: start: exit {code}:\n{out}"):
        return False
    code, out = control(script, env, "status")
    if not check(code == 0, f"round {n}: status after start: exit {code}: {out}"):
        return False
    if n == 1:
        code, out = control(script, env, "start")
        if not check(code == 0 and "already running" in out,
                     f"round {n}: start while running: exit {code}: {out}"):
            return False
    code, out = control(script, env, "stop")
    if not check(code == 0, f"round {n}: stop: exit {code}: {out}"):
        return False
    code, out = control(script, env, "status")
    if not check(code == 1, f"round {n}: status after stop: exit {code}: {out}"):
        return False
    left = leftovers(slurm_dir)
    return check(not left, f"round {n}: processes left after stop: {left}")


def main():
    root = sys.argv[1]
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("start_stop_test: terminated"))
    if os.geteuid() != 0:
        print("not root: the local Slurm daemons run as root: skipped")
        return SKIP
    for tool in ["srun", "sinfo", "slurmctld", "slurmd", "munged"]:
        if shutil.which(tool) is None:
            print(f"{tool} not found (scripts/setup.sh installs Slurm): skipped")
            return SKIP
    d = tempfile.mkdtemp(prefix="viaduct-slurm-cycles-")
    slurm_dir = f"{d}/slurm"
    env = cluster_env(slurm_dir)
    script = os.path.join(root, "scripts", "slurm-local")
    done = 0
    strangers = plant_stale_records(slurm_dir)
    try:
        code, out = control(script, env, "status")
        check(code == 1, f"status with stale records: exit {code}: {out}")
        while done < cycles and cycle(done + 1, script, env, slurm_dir):
            done += 1
            print(f"round {done}: started, idle, stopped", flush=True)
    except Skipped as e:
        print(f"{e}: skipped")
        return SKIP
    finally:
        control(script, env, "stop")
        for p in strangers:
            check(p.poll() is None, f"process {p.pid}, named by a stale record, was stopped")
            p.kill()
            p.wait()
        logs = f"{slurm_dir}/log"
        if failures and os.path.isdir(logs):
            for log in sorted(os.listdir(logs)):
                print(f"--- {log}:\n{slurp(f'{logs}/{log}')[-3000:]}")
        shutil.rmtree(d, ignore_errors=True)
    print(f"slurm-local start/stop: {done} of {cycles} rounds "
          f"{'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
