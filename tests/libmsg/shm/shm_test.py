#!/usr/bin/env python3
"""libmsg's shared memory over libfabric's shm provider: no name is left in /dev/shm once
msg_init has returned, a full or too small /dev/shm is a named error rather than a SIGBUS, and
a rank that dies in msg_init (SIGKILL, SIGTERM, or msgrun killed) leaves nothing behind.

usage: shm_test.py SCENARIO     (msgrun from VIADUCT_MSGRUN, the rank from VIADUCT_SHM_WORKER)
Scenarios:
  unlinked     3 ranks find no name of their own in /dev/shm after msg_init, then exchange
               messages of every size (with and without cross-memory copies)
  too_small    /dev/shm of 1 MiB: msg_init fails naming /dev/shm and its free space
  full         /dev/shm filled to the last page after msg_init: messages still move
  dead_ranks   a rank killed by SIGKILL or SIGTERM in msg_init, and msgrun killed by SIGKILL
               while its ranks are in msg_init: no name of any of them is left
too_small and full run in a mount namespace of their own with a small tmpfs on /dev/shm
(root only: skipped otherwise). The test waits on files and exits, never on sleeps.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures  # noqa: E402

MSGRUN = os.environ.get("VIADUCT_MSGRUN", "build/libmsg/tools/msgrun")
WORKER = os.environ.get("VIADUCT_SHM_WORKER", "build/tests/libmsg/shm_worker")
BOUND = 60 * SLOW
MIB = 1 << 20
# libfabric 1.17's region with its default queues; its fi_getinfo asks /dev/shm for one per CPU.
REGION = 16 * MIB


class Skip(Exception):
    pass


def job_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIADUCT_", "FI_"))}
    env.update(VIADUCT_PROVIDER="shm", **extra)
    return env


def run_job(n, args, env, msgrun_args=()):
    cmd = [MSGRUN, "-n", str(n), "--timeout", str(BOUND), *msgrun_args, *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=2 * BOUND)


def names_of(pid):
    """What /dev/shm holds of the process: the shm provider's region (and its files) and the
    doorbell's flag (its name ends in the pid as 8 hex digits)."""
    return (glob.glob(f"/dev/shm/viaduct-{pid}-*") +
            glob.glob(f"/dev/shm/viaduct-db-{'?' * 16}{pid:08x}"))


def rank_pids(stderr):
    """The ranks' pids, as msgrun names them when they end badly."""
    return [int(p) for p in re.findall(r"msgrun: rank \d+ .*\(pid (\d+)\)", stderr)]


def unlinked():
    for extra in ({}, {"VIADUCT_PROTOCOL": "sendrecv", "FI_SHM_DISABLE_CMA": "1"}):
        r = run_job(3, [WORKER, "traffic"], job_env(**extra))
        print(r.stderr[-3000:], flush=True)
        check(r.returncode == 0, f"{extra}: msgrun exit {r.returncode}, want 0")
        check(r.stdout.count("SHM_OK") == 3, f"{extra}: not every rank said SHM_OK: {r.stdout!r}")


# ---- a /dev/shm of its own -----------------------------------------------------------------

def private_dev_shm(size):
    """Re-runs this scenario in a mount namespace of its own with a tmpfs of `size` bytes on
    /dev/shm; returns its exit status."""
    if os.geteuid() != 0:
        raise Skip("needs root for a mount namespace")
    inner = ["unshare", "--mount", "--propagation", "private", sys.executable,
             os.path.abspath(__file__), "--inside", sys.argv[1], str(size)]
    r = subprocess.run(inner, timeout=4 * BOUND)
    return r.returncode


def mount_dev_shm(size):
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", "/dev/shm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip(f"cannot mount a tmpfs on /dev/shm: {r.stderr.strip()}")


def too_small_inside(size):
    mount_dev_shm(size)
    r = run_job(2, [WORKER, "traffic"], job_env())
    print(r.stderr[-3000:], flush=True)
    check(r.returncode != 0, "msg_init succeeded with 1 MiB of /dev/shm")
    check("/dev/shm has 1.0 MiB free of 1.0 MiB" in r.stderr,
          "the error does not name /dev/shm and its free space")
    check("no libfabric provider 'shm'" not in r.stderr, "the error blames a missing provider")


def one_cpu_online():
    """libfabric's shm provider asks /dev/shm for a region per online CPU: show it one, so the
    test's tmpfs (which it then fills) stays small on a machine with many."""
    with tempfile.NamedTemporaryFile("w", delete=False, prefix="viaduct-cpu-") as f:
        f.write("0\n")
    subprocess.run(["mount", "--bind", f.name, "/sys/devices/system/cpu/online"],
                   capture_output=True)
    os.unlink(f.name)


def full_inside(_size):
    one_cpu_online()
    cpus = os.sysconf("SC_NPROCESSORS_ONLN")
    # Room for the provider's check on each rank while the other's region is already taken.
    mount_dev_shm((cpus + 3) * REGION)
    # The provider's segments through the receiver's region, not cross-memory copies.
    env = job_env(VIADUCT_PROTOCOL="sendrecv", FI_SHM_DISABLE_CMA="1")
    r = run_job(2, [WORKER, "fill"], env)
    print(r.stderr[-3000:], flush=True)
    check("/dev/shm filled" in r.stderr, "rank 0 did not fill /dev/shm")
    check(r.returncode == 0, f"msgrun exit {r.returncode} with /dev/shm full, want 0")
    check("SIGBUS" not in r.stderr, "a rank died of SIGBUS")


# ---- ranks that die in msg_init ------------------------------------------------------------

def wait_for_file(path, proc):
    deadline = time.monotonic() + BOUND
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def living(pid):
    """True while the process runs (a zombie has ended: this machine's init may never reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def dead_in_init(how):
    """Rank 0 stops in msg_init once its shared memory exists (the worker's `hold` mode writes
    DIR/held and waits), then `how` ends it: a signal to it, or SIGKILL to msgrun."""
    with tempfile.TemporaryDirectory(prefix="viaduct-shm-") as d:
        held = f"{d}/held"
        env = job_env(VIADUCT_SHM_HOLD=held, VIADUCT_DEBUG="1")
        cmd = [MSGRUN, "-n", "2", "--timeout", str(BOUND), WORKER, "hold"]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
        try:
            if not check(wait_for_file(held, p), f"{how}: rank 0 never held in msg_init"):
                return
            with open(held) as f:
                pid0 = int(f.read())
            check(names_of(pid0) != [], f"{how}: rank 0 held with no shared memory")
            if how == "msgrun":
                p.send_signal(signal.SIGKILL)
            else:
                os.kill(pid0, getattr(signal, "SIG" + how))
            _, err = p.communicate(timeout=BOUND)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # The ranks outlive a killed msgrun a moment (their parent-death signal).
        pids = [pid0] + rank_pids(err)
        if how == "msgrun":
            pids += [int(x) for x in re.findall(r"shm_worker\[\d+\]: pid (\d+)", err)]
            deadline = time.monotonic() + BOUND
            while any(living(q) for q in pids) and time.monotonic() < deadline:
                time.sleep(0.02)
        left = [n for q in set(pids) for n in names_of(q)]
        print(err[-2000:], flush=True)
        check(not left, f"{how}: left in /dev/shm: {left}")


def dead_ranks():
    for how in ("KILL", "TERM", "msgrun"):
        dead_in_init(how)


SCENARIOS = {"unlinked": unlinked, "dead_ranks": dead_ranks,
             "too_small": lambda: private_dev_shm(MIB),
             "full": lambda: private_dev_shm(0)}
INSIDE = {"too_small": too_small_inside, "full": full_inside}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--inside":
        try:
            INSIDE[sys.argv[2]](int(sys.argv[3]))
        except Skip as e:
            print("SKIP", e, flush=True)
            return SKIP
        return 1 if failures else 0
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        rc = SCENARIOS[sys.argv[1]]()
    except Skip as e:
        print("SKIP", sys.argv[1], e, flush=True)
        return SKIP
    if rc is not None and rc != 0:
        return rc
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    print("PASS", sys.argv[1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
