#!/usr/bin/env python3
"""Stopped processes in a job started by hand: `msgrun --serve` plus three ranks given
VIADUCT_COORDINATOR, VIADUCT_RANK, VIADUCT_SIZE and VIADUCT_JOB_KEY_FILE, so nothing can see
the ranks' process state. A rank or the coordinator is stopped with SIGSTOP; the heartbeats
on the coordinator links must turn that into errors within the heartbeat period plus a few
seconds.

usage: liveness_test.py CASE   (msgrun from VIADUCT_MSGRUN, the rank program from
                                VIADUCT_LIVENESS_WORKER)
Cases: stopped_rank, stopped_coordinator, finalize_stopped_rank.
The test acts on files the ranks write and on lines the coordinator logs, never on sleeps.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SLOW, check, failures, slurp  # noqa: E402

HEARTBEAT_MS = 2000 * SLOW  # short, but longer where everything is slower
# What "bounded" means here: the heartbeat period plus a few seconds (more in slow builds).
BOUND = HEARTBEAT_MS / 1000.0 + 5.0 * SLOW
# How long the test waits for anything at all before giving up on it.
PATIENCE = 60.0 * SLOW

MSG_OK, MSG_ERR_PEER_FAILED, MSG_ERR_BOOTSTRAP = 0, -5, -9


def wait_until(pred, what):
    deadline = time.monotonic() + PATIENCE
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up after {PATIENCE:.0f} s waiting for {what}")
        time.sleep(0.01)


def kill(proc):
    """Ends a process of ours, stopped or not; one that already exited is fine."""
    if proc.poll() is None:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    proc.wait()


class Job:
    def __init__(self, d, roles):
        self.d = d
        self.coord = None
        self.ranks = []
        try:
            self.start(roles)
        except BaseException:
            self.dump()
            self.close()
            raise

    def start(self, roles):
        d = self.d
        env = dict(os.environ)
        for k in ("VIADUCT_JOB_KEY", "VIADUCT_JOB_KEY_FILE", "VIADUCT_COORDINATOR",
                  "VIADUCT_RANK", "VIADUCT_SIZE", "VIADUCT_COORDINATOR_HOST"):
            env.pop(k, None)
        env["VIADUCT_HEARTBEAT_MS"] = str(HEARTBEAT_MS)
        key_file = f"{d}/key"
        self.coord_log = f"{d}/coordinator.log"
        with open(self.coord_log, "w") as out:
            self.coord = subprocess.Popen(
                [os.environ["VIADUCT_MSGRUN"], "-n", str(len(roles)), "--serve", "127.0.0.1:0",
                 "--key-file", key_file, "--timeout", str(int(10 * PATIENCE))],
                env=dict(env, VIADUCT_DEBUG="1"), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        # The key file is in place before msgrun names its port.
        pattern = re.compile(r"coordinating \d+ ranks on 127\.0\.0\.1:(\d+)")
        wait_until(lambda: pattern.search(slurp(self.coord_log)), "msgrun --serve to listen")
        port = pattern.search(slurp(self.coord_log)).group(1)
        for r, role in enumerate(roles):
            rank_env = dict(env, VIADUCT_COORDINATOR=f"127.0.0.1:{port}", VIADUCT_RANK=str(r),
                            VIADUCT_SIZE=str(len(roles)), VIADUCT_JOB_KEY_FILE=key_file,
                            VIADUCT_PROVIDER="tcp;ofi_rxm")
            with open(self.rank_log(r), "w") as out:
                self.ranks.append(subprocess.Popen(
                    [os.environ["VIADUCT_LIVENESS_WORKER"], d, role], env=rank_env, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        for r in range(len(roles)):
            wait_until(lambda: os.path.exists(f"{d}/ready-{r}"), f"rank {r} to be ready")

    def rank_log(self, r):
        return f"{self.d}/rank{r}.log"

    def wait_barrier(self, ranks):
        """Until the coordinator has logged each of ranks reaching the first barrier."""
        for r in ranks:
            wait_until(lambda: f"rank {r} reached barrier 0" in slurp(self.coord_log),
                       f"rank {r} to reach the barrier")

    def finish(self, ranks):
        """Waits for ranks to exit; returns {rank: (status, {what: (rc, epoch)})}."""
        out = {}
        deadline = time.monotonic() + PATIENCE
        for r in ranks:
            p = self.ranks[r]
            try:
                status = p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                check(False, f"rank {r} still running {PATIENCE:.0f} s on")
                status = None
            results = {}
            for m in re.finditer(r"^RESULT (\w+) (-?\d+) ([\d.]+)", slurp(self.rank_log(r)), re.M):
                results[m.group(1)] = (int(m.group(2)), float(m.group(3)))
            out[r] = (status, results)
        return out

    def close(self):
        for p in self.ranks + ([self.coord] if self.coord else []):
            kill(p)

    def dump(self):
        print("---- coordinator ----\n" + slurp(self.coord_log))
        for r in range(len(self.ranks)):
            print(f"---- rank {r} ----\n" + slurp(self.rank_log(r)))


def expect(results, r, what, rc, since, label):
    status, res = results[r]
    got = res.get(what)
    if not check(got is not None, f"rank {r}: no result for {what} ({label})"):
        return
    check(got[0] == rc, f"rank {r}: {what} returned {got[0]}, expected {rc} ({label})")
    delay = got[1] - since
    print(f"rank {r}: {what} returned {got[0]} {delay:.2f} s after {label}", flush=True)
    check(delay <= BOUND, f"rank {r}: {what} took {delay:.2f} s after {label} (bound {BOUND} s)")


def stopped_rank(d):
    # Rank 0 blocks in a receive from rank 2, then in the barrier; rank 1 waits in the
    # barrier (with a receive from rank 2 posted) before rank 2 is stopped.
    job = Job(d, ["recv_first", "barrier_first", "idle"])
    try:
        job.wait_barrier([1])
        job.ranks[2].send_signal(signal.SIGSTOP)
        t0 = time.time()
        res = job.finish([0, 1])
        label = "SIGSTOP of rank 2"
        expect(res, 0, "recv", MSG_ERR_PEER_FAILED, t0, label)
        expect(res, 0, "barrier", MSG_ERR_PEER_FAILED, t0, label)
        expect(res, 1, "barrier", MSG_ERR_PEER_FAILED, t0, label)
        expect(res, 1, "recv", MSG_ERR_PEER_FAILED, t0, label)
        for r in (0, 1):
            check(res[r][0] == 0, f"rank {r} exited {res[r][0]}")
        check("rank 2 (" in slurp(job.coord_log) and "sent nothing for" in slurp(job.coord_log),
              "the coordinator did not say rank 2 went silent")
    finally:
        if failures or sys.exc_info()[0] is not None or os.environ.get("LIVENESS_DUMP"):
            job.dump()
        job.close()


def stopped_coordinator(d):
    # Ranks 0 and 1 wait in a barrier rank 2 never reaches; rank 2 waits for a message from
    # rank 0. Then the coordinator stops.
    job = Job(d, ["barrier", "barrier", "recv_rank0"])
    try:
        job.wait_barrier([0, 1])
        job.coord.send_signal(signal.SIGSTOP)
        t0 = time.time()
        res = job.finish([0, 1, 2])
        label = "SIGSTOP of the coordinator"
        expect(res, 0, "barrier", MSG_ERR_BOOTSTRAP, t0, label)
        expect(res, 1, "barrier", MSG_ERR_BOOTSTRAP, t0, label)
        expect(res, 2, "recv", MSG_ERR_PEER_FAILED, t0, label)
        for r in (0, 1, 2):
            log = slurp(job.rank_log(r))
            check(re.search(r"the job coordinator at 127\.0\.0\.1:\d+ stopped answering for", log),
                  f"rank {r} did not name the silent coordinator")
            check("finalize" in res[r][1], f"rank {r} did not get through msg_finalize")
    finally:
        if failures or sys.exc_info()[0] is not None or os.environ.get("LIVENESS_DUMP"):
            job.dump()
        job.close()


def finalize_stopped_rank(d):
    # Ranks 0 and 1 are inside msg_finalize's barrier when rank 2 stops.
    job = Job(d, ["finalize", "finalize", "idle"])
    try:
        job.wait_barrier([0, 1])
        job.ranks[2].send_signal(signal.SIGSTOP)
        t0 = time.time()
        res = job.finish([0, 1])
        label = "SIGSTOP of rank 2"
        expect(res, 0, "finalize", MSG_ERR_PEER_FAILED, t0, label)
        expect(res, 1, "finalize", MSG_ERR_PEER_FAILED, t0, label)
        for r in (0, 1):
            check(res[r][0] == 0, f"rank {r} exited {res[r][0]}")
    finally:
        if failures or sys.exc_info()[0] is not None or os.environ.get("LIVENESS_DUMP"):
            job.dump()
        job.close()


CASES = {
    "stopped_rank": stopped_rank,
    "stopped_coordinator": stopped_coordinator,
    "finalize_stopped_rank": finalize_stopped_rank,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix="viaduct-liveness-") as d:
        try:
            CASES[sys.argv[1]](d)
        except RuntimeError as e:
            check(False, str(e))
    if failures:
        return 1
    print("PASS", sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
