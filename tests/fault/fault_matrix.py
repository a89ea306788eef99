#!/usr/bin/env python3
"""Fault injection into the distributed sort: every role, phase and signal.

usage: fault_matrix.py [--repeat N] [--providers alternate|shm|tcp|shm,tcp]
                       [--only ROLE[:PHASE[:SIGNAL]]]
                       [--json FILE]
(alternate, the default: providers shm and tcp case by case in turn, swapped each repeat.)

For each case a 4-node `sortapp run` is started with SORTAPP_TEST_HOLD, which makes one process
wait at the start of a phase and write its pid to a file; the test waits for that file (never
for the clock), sends the signal to the victim (a node, the monitor, msgrun or `sortapp run`),
then lets the held process go on. It then asserts:
  - every process of the job exits within the bound (stall timeout + grace + margin);
  - `sortapp run` exits non-zero naming the cause, or exits 0 with outputs sortcheck accepts;
  - after a failure, no work file, temporary output or part of a sort is left: outputs stay
    only as the whole, valid sort, and only when the wrapper (sortapp run, msgrun) was killed
    after the monitor had told every node to keep its output;
  - the inputs are byte-identical to what they were (SHA-256 before and after);
  - no process of the job left a name in /dev/shm (libfabric's shm region, libmsg's doorbell).
A stopped victim is killed at the end of its case (the test's own clean-up, after the checks).
Binaries: SORTAPP_BIN, SORTGEN_BIN, SORTCHECK_BIN, VIADUCT_MSGRUN (as the cluster tests).
Prints one line per case and a summary (runs, failures, worst time to exit per case).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import sha  # noqa: E402

# Where the binaries are: default to a build directory's layout (meson sets these).
SORTAPP = os.environ.get("SORTAPP_BIN", "build/sortapp/sortapp")
SORTGEN = os.environ.get("SORTGEN_BIN", "build/sortapp/sortgen")
SORTCHECK = os.environ.get("SORTCHECK_BIN", "build/sortapp/sortcheck")
SLOW = int(os.environ.get("VIADUCT_TEST_SLOWDOWN", "1"))
NODES = 4
VICTIM_NODE = 1
STALL_S = 5
# Stall detection, then msgrun's grace period before SIGKILL, then start-up and clean-up.
BOUND_S = (STALL_S + 5 + 20) * SLOW

ROLES = ["node", "monitor", "msgrun", "run"]
# sample and river: the river algorithm's steps (`--algorithm river`).
PHASES = ["check", "local", "3a", "3b", "commit", "sample", "river"]
SIGNALS = ["KILL", "TERM", "STOP"]
PROVIDERS = {"shm": "shm", "tcp": "tcp;ofi_rxm"}

# Where each process announces each phase (liveness.cpp's set_phase names).
NODE_PHASE = {"check": "checking", "local": "phase 1", "3b": "phase 3b", "commit": "commit",
              "sample": "sampling", "river": "river"}
MONITOR_PHASE = {"check": "checking", "local": "phases 1 and 2", "3a": "phase 3a",
                 "3b": "phase 3b", "commit": "commit", "sample": "sampling", "river": "river sort"}


def hold_point(role, phase):
    """(who holds, phase name): the process that waits while the victim is hit."""
    if role == "node" and phase in NODE_PHASE:
        return f"node {VICTIM_NODE}", NODE_PHASE[phase]
    if role in ("msgrun", "run") and phase in NODE_PHASE:
        return f"node {VICTIM_NODE}", NODE_PHASE[phase]
    # A node's sorting thread is idle in phase 3a (its shadow thread answers): the monitor
    # holds there instead.
    return "monitor", MONITOR_PHASE[phase]


def job_pids(job_dir):
    """Processes whose command line names this case's directory (the ranks and msgrun)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if job_dir in cmd and "fault_matrix" not in cmd:
            pids.append(int(p))
    return pids


def shm_names(pids):
    """What /dev/shm holds of these processes: libfabric's shm region (viaduct-PID-...) and
    libmsg's doorbell flag (viaduct-db-..., ending in the pid as 8 hex digits)."""
    names = []
    for n in os.listdir("/dev/shm"):
        for pid in pids:
            if n.startswith(f"viaduct-{pid}-") or (n.startswith("viaduct-db-") and
                                                   n.endswith(f"{pid:08x}")):
                names.append(n)
    return sorted(names)


def living(pid):
    """True while the process runs (a zombie has ended: this machine's init may never reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def signal_pid(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass  # it had already gone: not an error


def wait_for_file(path, proc, deadline):
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    return None


def leftovers(d):
    """Files in the case's directory that are not inputs or the test's own."""
    return sorted(n for n in os.listdir(d)
                  if not n.startswith("in.") and n not in ("held", "held.tmp", "stderr"))


def run_case(base, role, phase, sig, provider, inputs_sha, want):
    d = tempfile.mkdtemp(dir=base, prefix=f"{role}-{phase}-{sig}-")
    for k in range(NODES):
        os.link(f"{base}/in.{k}", f"{d}/in.{k}")
    who, at = hold_point(role, phase)
    held = f"{d}/held"
    env = dict(os.environ, SORTAPP_TEST_HOLD=f"{who}|{at}|{held}")
    cmd = [SORTAPP, "run", "-n", str(NODES), "--input", f"{d}/in.{{rank}}", "--output",
           f"{d}/out.{{rank}}", "--provider", PROVIDERS[provider], "--stall-timeout",
           str(STALL_S * SLOW), "--timeout", str(BOUND_S * 4), "--network-mb-s", "1000",
           "--memory", "64M"]
    if phase in ("sample", "river"):
        cmd += ["--algorithm", "river"]
    err = open(f"{d}/stderr", "w+", errors="backslashreplace")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
    problems = []
    start = time.monotonic()
    held_pid = wait_for_file(held, proc, start + 120 * SLOW)
    if held_pid is None:
        problems.append(f"the hold point {who!r} at {at!r} was never reached")
        signal_pid(proc.pid, signal.SIGKILL)
        proc.wait()
        return problems, 0.0, d
    if role == "node" or role == "monitor":
        victim = held_pid if who.startswith(role) else None
        if victim is None:  # the node in phase 3a: find its pid by its rank
            victim = rank_pid(d, VICTIM_NODE)
    elif role == "msgrun":
        victim = msgrun_pid(proc.pid)
    else:
        victim = proc.pid
    if victim is None:
        problems.append("victim not found")
        victim = proc.pid
    # Every process of the job is past its start by now: their names in /dev/shm are checked
    # once they are all gone.
    seen = set(job_pids(d))
    t0 = time.monotonic()
    signal_pid(victim, getattr(signal, "SIG" + sig))
    try:
        os.unlink(held)  # the held process goes on (unless it is the victim)
    except FileNotFoundError:
        pass
    # The job must end by itself; a stopped `sortapp run` is the only process allowed to wait.
    deadline = t0 + BOUND_S
    run_stopped = role == "run" and sig == "STOP"
    while time.monotonic() < deadline:
        seen.update(job_pids(d))
        others = [p for p in job_pids(d) if p != victim or not sig == "STOP"]
        if run_stopped:
            others = [p for p in others if p != proc.pid]
        if not others and (run_stopped or proc.poll() is not None):
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - t0
    still = [p for p in job_pids(d) if not (sig == "STOP" and p == victim)]
    if run_stopped:
        still = [p for p in still if p != proc.pid]
        signal_pid(proc.pid, signal.SIGCONT)
    if still:
        problems.append(f"processes still running after {BOUND_S} s: {still}")
    if sig == "STOP" and not run_stopped:
        signal_pid(victim, signal.SIGKILL)  # the test's own clean-up of the stopped process
    try:
        code = proc.wait(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        problems.append("sortapp run did not exit")
        signal_pid(proc.pid, signal.SIGKILL)
        code = proc.wait()
    for p in job_pids(d):
        signal_pid(p, signal.SIGKILL)
    gone = time.monotonic() + BOUND_S
    while any(living(p) for p in seen) and time.monotonic() < gone:
        time.sleep(0.05)
    if shm_names(seen):
        problems.append(f"left in /dev/shm: {shm_names(seen)}")
    err.seek(0)
    stderr = err.read()
    err.close()
    outs = [f"{d}/out.{k}" for k in range(NODES)]
    extra = [n for n in leftovers(d) if n not in [os.path.basename(o) for o in outs]]
    if extra:
        problems.append(f"exit {code} but left {extra}")
    if code == 0 or any(os.path.exists(o) for o in outs):
        # Outputs may stay only as the whole, valid sort: after success, or when the wrapper
        # (sortapp run or msgrun) was killed after the monitor had told every node to keep
        # its output. A part of a sort is never left.
        if not valid_sort(outs, want):
            problems.append(f"exit {code} and outputs that are not the whole, valid sort: "
                            f"{[o for o in outs if os.path.exists(o)]}")
        elif code != 0 and role not in ("run", "msgrun"):
            problems.append(f"exit {code} but the outputs were kept")
    if code != 0 and not named(role, sig, code, stderr):
        problems.append(f"exit {code} without naming the cause: {stderr[-600:]!r}")
    for k in range(NODES):
        if sha(f"{d}/in.{k}") != inputs_sha[k]:
            problems.append(f"input {k} changed")
    if problems:
        problems.append(f"stderr: {stderr[-1500:]!r}")
    return problems, elapsed, d


def summary(files):
    r = subprocess.run([SORTCHECK, "--json", *files], capture_output=True, text=True)
    return json.loads(r.stdout) if r.stdout.strip() else {}


def valid_sort(outs, want):
    if not all(os.path.exists(o) for o in outs):
        return False
    got = summary(outs)
    return (got.get("sorted") is True and got.get("records") == want.get("records") and
            got.get("checksum") == want.get("checksum"))


def named(role, sig, code, stderr):
    """The failure names who failed, or is the victim's own signal."""
    if role == "run" and code == -getattr(signal, "SIG" + sig):
        return True
    want = {"node": f"node {VICTIM_NODE}", "monitor": "monitor", "msgrun": "msgrun",
            "run": "SIG" + sig}[role]
    return want in stderr


def rank_pid(d, rank):
    for p in job_pids(d):
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"VIADUCT_RANK={rank}".encode() in env and b"job" in open(
                f"/proc/{p}/cmdline", "rb").read():
            return p
    return None


def msgrun_pid(parent):
    try:
        with open(f"/proc/{parent}/task/{parent}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        return None
    return kids[0] if kids else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--providers", default="alternate",
                    help="shm, tcp, shm,tcp (every case on each), or alternate (default)")
    ap.add_argument("--only", default="", help="ROLE[:PHASE[:SIGNAL]]")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    for name, path in [("SORTAPP_BIN", SORTAPP), ("SORTGEN_BIN", SORTGEN),
                       ("SORTCHECK_BIN", SORTCHECK)]:
        if not os.access(path, os.X_OK):
            sys.exit(f"fault_matrix: {path} is not an executable; set {name} (and VIADUCT_MSGRUN)")
    only = args.only.split(":") if args.only else []
    cases = [(r, p, s) for r in ROLES for p in PHASES for s in SIGNALS
             if (not only or only[0] == r) and (len(only) < 2 or only[1] == p) and
             (len(only) < 3 or only[2] == s)]
    if not cases:
        sys.exit(f"fault_matrix: --only {args.only} matches no case (roles {', '.join(ROLES)}; "
                 f"phases {', '.join(PHASES)}; signals {', '.join(SIGNALS)})")
    base = tempfile.mkdtemp(prefix="viaduct-fault-")
    for k in range(NODES):
        subprocess.run([SORTGEN, "--seed", str(k + 1), "--first", str(k * 20000), "20000",
                        f"{base}/in.{k}"], check=True, capture_output=True)
    inputs_sha = [sha(f"{base}/in.{k}") for k in range(NODES)]
    want = summary([f"{base}/in.{k}" for k in range(NODES)])
    results, failed = [], 0
    worst = {}
    n = 0
    for rep in range(args.repeat):
        for role, phase, sig in cases:
            if args.providers == "alternate":
                # Case by case in turn, and swapped from one repeat to the next.
                provs = ["shm" if (n + rep) % 2 == 0 else "tcp"]
            else:
                provs = args.providers.split(",")
            for prov in provs:
                n += 1
                problems, elapsed, d = run_case(base, role, phase, sig, prov, inputs_sha, want)
                key = f"{role}:{phase}:{sig}"
                worst[key] = max(worst.get(key, 0.0), elapsed)
                status = "FAIL" if problems else "ok"
                print(f"[{rep + 1}/{args.repeat}] {key:22} {prov:3}  {status}  exited in "
                      f"{elapsed:5.2f} s", flush=True)
                for p in problems:
                    print("    " + p, flush=True)
                if problems:
                    failed += 1
                else:
                    subprocess.run(["rm", "-rf", d])
                results.append({"case": key, "provider": prov, "repeat": rep, "ok": not problems,
                                "seconds_to_exit": round(elapsed, 3), "problems": problems})
    print(f"fault matrix: {n} runs, {failed} failed; worst time to exit "
          f"{max(worst.values()) if worst else 0:.2f} s (bound {BOUND_S} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": n, "failed": failed, "bound_s": BOUND_S, "worst_s": worst,
                       "results": results}, f, indent=1)
    if failed == 0:
        subprocess.run(["rm", "-rf", base])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
