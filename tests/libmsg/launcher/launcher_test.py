#!/usr/bin/env python3
"""msgrun's care of its ranks: signals reach every rank and what it started, no rank outlives
msgrun, --timeout ends with SIGTERM then SIGKILL, a rank's fatal signal is named, --bind-to
core puts each rank on a CPU of its own, and a rank's waits yield only where ranks share CPUs.

usage: launcher_test.py SCENARIO        (msgrun from VIADUCT_MSGRUN)
       launcher_test.py rank MODE DIR   (what msgrun runs as each rank)
Scenarios: forward_term, second_signal, stopped_rank, msgrun_killed, timeout_grace,
failure_grace, rank_signal, tty_stdin, bind_core, wait_yield.
The test waits on files the ranks write (their pids, the signals they saw), never on sleeps.
"""
import os
import pty
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SKIP, SLOW, check, failures, slurp  # noqa: E402

BOUND = 30 * SLOW  # seconds allowed for anything that should happen at once


class Skip(Exception):
    pass


# ---- the rank side -------------------------------------------------------------------------

def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def rank_main(mode, d):
    rank = os.environ["VIADUCT_RANK"]
    pids = [os.getpid()]
    if mode == "child":
        # A process of the rank's own, which must get the job's signals too.
        pids.append(subprocess.Popen(["sleep", "3600"]).pid)
    elif mode == "stubborn":
        # Notes every stop signal and keeps running: only SIGKILL ends it.
        def note(sig, _frame):
            write_atomically(f"{d}/{signal.Signals(sig).name}.{rank}", "")
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, note)
    elif mode == "read_stdin":
        write_atomically(f"{d}/pid.{rank}", str(os.getpid()))
        write_atomically(f"{d}/read.{rank}", sys.stdin.read())
        return 0
    elif mode == "one_fails":
        # Rank 1 fails at once; the others wait for whatever comes (as a rank wedged in a
        # provider would), so only msgrun can end them.
        write_atomically(f"{d}/pid.{rank}", str(os.getpid()))
        if rank == "1":
            return 3
    elif mode == "affinity":
        # Its CPUs and those of a process it starts (which inherits them).
        child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, check=True).stdout.strip()
        write_atomically(f"{d}/cpus.{rank}", f"{sorted(os.sched_getaffinity(0))} {child}")
        return 0
    elif mode == "segv":
        if rank == "1":
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(signal.SIGSEGV, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGSEGV)
        return 0
    write_atomically(f"{d}/pid.{rank}", " ".join(map(str, pids)))
    while True:
        signal.pause()


# ---- the test side -------------------------------------------------------------------------

def start_time(pid):
    """The process's start time (identifies it across pid reuse), or None if it is gone or
    a zombie (this machine's init may never reap orphans)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] in "ZX" else fields[19]


def wait_for(cond, what):
    deadline = time.monotonic() + BOUND
    while not cond():
        if time.monotonic() > deadline:
            check(False, f"not within {BOUND} s: {what}")
            return False
        time.sleep(0.02)
    return True


def read_pids(p, d, n):
    """Waits for every rank's pid file; returns {pid: start time} of the ranks and theirs."""
    written = lambda: all(os.path.exists(f"{d}/pid.{r}") for r in range(n))
    wait_for(lambda: written() or p.poll() is not None, "every rank wrote its pid file")
    if not check(written(), f"msgrun exited {p.returncode} before every rank wrote its pid"):
        return {}
    procs = {}
    for r in range(n):
        with open(f"{d}/pid.{r}") as f:
            for pid in map(int, f.read().split()):
                procs[pid] = start_time(pid)
    return procs


def alive(procs):
    return [pid for pid, start in procs.items() if start and start_time(pid) == start]


def kill_leftovers(procs):
    for pid in alive(procs):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # ended between the look and the kill


def signal_msgrun(p, sig):
    try:
        p.send_signal(sig)
    except ProcessLookupError:
        pass


def msgrun_command(d, n, mode, *opts):
    # The ranks here are Python, not libmsg programs: they never join the job.
    return [os.environ["VIADUCT_MSGRUN"], "-n", str(n), "--allow-no-join", *opts,
            "--", sys.executable, os.path.abspath(__file__), "rank", mode, d]


def msgrun(d, n, mode, *opts):
    cmd = msgrun_command(d, n, mode, *opts)
    # A file, not a pipe: a process left running would hold a pipe open.
    with open(f"{d}/stderr", "w") as err:
        return subprocess.Popen(cmd, stderr=err)


def finish(p, d, what):
    """msgrun's status and stderr, once it has exited (killed after BOUND s if not)."""
    rc = None
    try:
        rc = p.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    with open(f"{d}/stderr") as f:
        err = f.read()
    print(f"--- msgrun's stderr ({what}, exit {rc}):\n{err}---", flush=True)
    check(rc is not None, f"{what}: msgrun still running after {BOUND} s")
    return rc, err


def forward_term(d):
    """SIGTERM to msgrun reaches every rank and the process each started; msgrun exits 143."""
    n = 3
    # A grace period longer than the bound: only the forwarded SIGTERM can end the ranks.
    p = msgrun(d, n, "child", "--grace", str(10 * BOUND))
    procs = read_pids(p, d, n)
    try:
        signal_msgrun(p, signal.SIGTERM)
        rc, err = finish(p, d, "forward_term")
        check(rc == 128 + signal.SIGTERM, f"msgrun exit {rc}, want 143")
        check("ranks 0, 1, 2" in err, f"msgrun did not name the running ranks")
        for r in range(n):
            check(f"rank {r} killed by SIGTERM" in err, f"rank {r}'s end")
        wait_for(lambda: not alive(procs), f"ranks and their children gone: {alive(procs)}")
    finally:
        kill_leftovers(procs)


def second_signal(d):
    """Ranks that survive the first signal get SIGKILL at the second, not after the grace."""
    n = 2
    p = msgrun(d, n, "stubborn", "--grace", str(10 * BOUND))
    procs = read_pids(p, d, n)
    try:
        signal_msgrun(p, signal.SIGINT)
        wait_for(lambda: all(os.path.exists(f"{d}/SIGINT.{r}") for r in range(n)),
                 "every rank got the forwarded SIGINT")
        signal_msgrun(p, signal.SIGHUP)
        rc, err = finish(p, d, "second_signal")
        check(rc == 128 + signal.SIGINT, f"msgrun exit {rc}, want 130")
        check("second signal (SIGHUP): sending SIGKILL to ranks 0, 1" in err,
              f"no SIGKILL at the second signal")
        for r in range(n):
            check(f"rank {r} killed by SIGKILL" in err, f"rank {r}'s end")
        check(not alive(procs), f"ranks left running: {alive(procs)}")
    finally:
        kill_leftovers(procs)


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def stopped_rank(d):
    """Ranks stopped by SIGSTOP are continued after the forwarded SIGTERM, and act on it."""
    n = 2
    p = msgrun(d, n, "plain", "--grace", str(10 * BOUND))
    procs = read_pids(p, d, n)
    try:
        for pid in procs:
            os.kill(pid, signal.SIGSTOP)
        wait_for(lambda: all(state(pid) == "T" for pid in procs), "every rank stopped")
        signal_msgrun(p, signal.SIGTERM)
        rc, err = finish(p, d, "stopped_rank")
        check(rc == 128 + signal.SIGTERM, f"msgrun exit {rc}, want 143")
        for r in range(n):
            check(f"rank {r} killed by SIGTERM" in err, f"rank {r}'s end")
    finally:
        kill_leftovers(procs)


def tty_stdin(d):
    """msgrun on a terminal: a rank that reads stdin gets end-of-file, not a stop (SIGTTIN,
    its process group being in the background)."""
    n = 2
    try:
        pid, fd = pty.fork()
    except OSError as e:
        raise Skip(f"no pseudo-terminal: {e}")
    if pid == 0:
        try:
            cmd = msgrun_command(d, n, "read_stdin", "--timeout", str(10 * BOUND))
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    out, rc = b"", None
    deadline = time.monotonic() + BOUND
    try:
        while rc is None and time.monotonic() < deadline:
            # The terminal must be read, or output into it would block.
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    pass  # EIO: msgrun's side of the terminal is closed
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
        print(f"--- msgrun's terminal (exit {rc}):\n{out.decode(errors='replace')}---")
        check(rc == 0, f"msgrun exit {rc} (within {BOUND} s), want 0")
        for r in range(n):
            check(os.path.exists(f"{d}/read.{r}"), f"rank {r} did not read end-of-file")
    finally:
        if rc is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            for r in range(n):
                try:
                    with open(f"{d}/pid.{r}") as f:
                        os.kill(int(f.read()), signal.SIGKILL)
                except (FileNotFoundError, ProcessLookupError):
                    pass  # never started, or ended meanwhile
        os.close(fd)


def msgrun_killed(d):
    """msgrun killed by SIGKILL leaves no rank behind (their parent-death signal)."""
    n = 3
    p = msgrun(d, n, "plain")
    procs = read_pids(p, d, n)
    try:
        signal_msgrun(p, signal.SIGKILL)
        finish(p, d, "msgrun_killed")
        wait_for(lambda: not alive(procs), f"ranks gone after msgrun's death: {alive(procs)}")
    finally:
        kill_leftovers(procs)


def timeout_grace(d):
    """--timeout with ranks that ignore SIGTERM: SIGTERM, the grace period, SIGKILL, 124."""
    n = 2
    # The ranks inherit SIGTERM ignored from their start (msgrun keeps an ignored signal
    # ignored), so they ignore it whenever the timeout comes.
    old = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        p = msgrun(d, n, "plain", "--timeout", "1", "--grace", "1")
    finally:
        signal.signal(signal.SIGTERM, old)
    try:
        rc, err = finish(p, d, "timeout_grace")
        check(rc == 124, f"msgrun exit {rc}, want 124")
        check("msgrun: timeout after 1 s: ranks 0, 1 still running" in err,
              f"no timeout message naming the ranks")
        check("grace period of 1 s over: sending SIGKILL to ranks 0, 1" in err,
              f"no SIGKILL after the grace period")
        for r in range(n):
            check(f"rank {r} killed by SIGKILL" in err, f"rank {r}'s end")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def failure_grace(d):
    """After a rank fails, the others are stopped once the ranks' own timeout
    (VIADUCT_TIMEOUT_MS) has had its time twice, plus 5 s: here 7 s, well before the bound."""
    n = 2
    os.environ["VIADUCT_TIMEOUT_MS"] = "1000"
    start = time.monotonic()
    try:
        p = msgrun(d, n, "one_fails")
    finally:
        del os.environ["VIADUCT_TIMEOUT_MS"]
    procs = read_pids(p, d, n)
    try:
        rc, err = finish(p, d, "failure_grace")
        # msgrun's clock, not the ranks' speed: no slowdown factor. The old fixed grace was 60 s.
        elapsed = time.monotonic() - start
        check(elapsed < 45, f"the job took {elapsed:.1f} s to end after rank 1 failed")
        check(rc == 3, f"msgrun exit {rc}, want rank 1's 3")
        check("a rank failed; ending rank 0 (still running)" in err,
              "msgrun did not end the remaining rank")
        check("rank 0 killed by SIGTERM" in err, "rank 0's end")
    finally:
        kill_leftovers(procs)


def rank_signal(d):
    """A rank killed by SIGSEGV is reported by name, and msgrun exits 128+11."""
    p = msgrun(d, 3, "segv")
    rc, err = finish(p, d, "rank_signal")
    check(rc == 128 + signal.SIGSEGV, f"msgrun exit {rc}, want 139")
    check("rank 1 killed by SIGSEGV" in err, f"SIGSEGV not named")


def bind_core(d):
    """--bind-to core: rank r and what it starts run on the (r mod k)-th of msgrun's k CPUs
    only; --bind-to none leaves them all; auto (the default) is core for up to k ranks and
    none for more; another word is a usage error."""
    mine = sorted(os.sched_getaffinity(0))
    k = len(mine)
    one = lambda r: [mine[r % k]]
    for n, opts, want in ((k + 1, (), lambda r: mine), (k, (), one), (k, ("--bind-to", "auto"), one),
                          (k + 1, ("--bind-to", "core"), one), (k + 1, ("--bind-to", "none"), lambda r: mine)):
        for f in os.listdir(d):
            os.unlink(f"{d}/{f}")
        rc, _ = finish(msgrun(d, n, "affinity", *opts), d, f"bind {opts}")
        check(rc == 0, f"msgrun -n {n} {opts}: exit {rc}")
        for r in range(n):
            with open(f"{d}/cpus.{r}") as f:
                got = f.read()
            check(got == f"{want(r)} {want(r)}", f"-n {n} {opts}: rank {r} on CPUs {got}, want {want(r)}")
    rc, err = finish(msgrun(d, 2, "affinity", "--bind-to", "socket"), d, "bind socket")
    check(rc == 2 and "--bind-to" in err, f"--bind-to socket: exit {rc}, want 2 naming the option")


def wait_yield(d):
    """A rank's waits yield the CPU only when more of the job's ranks may run on its CPUs than
    there are CPUs between them: ranks bound one to a CPU do not, ranks that wrap round onto a
    CPU do, and so do k + 1 unbound ranks or two ranks confined to one CPU."""
    mine = sorted(os.sched_getaffinity(0))
    k = len(mine)
    msgrun_bin, join_rank_bin = os.environ["VIADUCT_MSGRUN"], os.environ["VIADUCT_JOIN_RANK"]
    cases = [([msgrun_bin, "-n", str(k), "--bind-to", "core"], k, lambda r: 0),
             ([msgrun_bin, "-n", str(k + 1), "--bind-to", "core"], k + 1, lambda r: int(r % k == 0)),
             ([msgrun_bin, "-n", str(k + 1), "--bind-to", "none"], k + 1, lambda r: 1),
             (["taskset", "-c", str(mine[0]), msgrun_bin, "-n", "2"], 2, lambda r: 1)]
    if k >= 2:
        cases.append(([msgrun_bin, "-n", str(k), "--bind-to", "none"], k, lambda r: 0))
    for launch, n, want in cases:
        p = subprocess.run([*launch, "--timeout", str(BOUND), "--", join_rank_bin, "0"],
                           capture_output=True, text=True, timeout=2 * BOUND)
        check(p.returncode == 0, f"{launch}: exit {p.returncode}\n{p.stderr[-2000:]}")
        for r in range(n):
            check(f"rank {r} joined, yield {want(r)}" in p.stdout,
                  f"{launch}: rank {r} should say yield {want(r)}:\n{p.stdout}")


def join_rank(no_finalize=-1):
    """One rank's command: join_rank, which joins at once and, as rank `no_finalize`, exits 0
    without msg_finalize."""
    return [os.environ["VIADUCT_JOIN_RANK"], "0", str(no_finalize)]


def join_timeout(d):
    """--join-timeout counts from the first rank's msg_init: ranks that set up longer than it
    before msg_init (all alike) run; a rank that joins after the first one's window has passed
    fails the job (the coordinator names how many joined), and msgrun exits non-zero. The late
    rank is held until the coordinator has said so, not for a time."""
    join_rank_bin = os.environ["VIADUCT_JOIN_RANK"]
    window_ms = int(3000 * SLOW)  # the ranks' msg_init calls, loaded, may be this far apart
    slow_setup = [os.environ["VIADUCT_MSGRUN"], "-n", "2", "--join-timeout", str(window_ms),
                  "--", "sh", "-c", f'sleep {window_ms / 1000 + 1}; exec "{join_rank_bin}" 0']
    p = subprocess.run(slow_setup, capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 0 and p.stdout.count("joined") == 2,
          f"ranks that set up for longer than --join-timeout {window_ms}: exit {p.returncode}\n"
          f"{p.stdout}{p.stderr[-2000:]}")
    go = f"{d}/go"
    late = [os.environ["VIADUCT_MSGRUN"], "-n", "2", "--join-timeout", "500", "--timeout",
            str(BOUND), "--", "sh", "-c",
            f'if [ "$VIADUCT_RANK" = 1 ]; then while [ ! -e "{go}" ]; do sleep 0.05; done; fi; '
            f'exec "{join_rank_bin}" 0']
    said = "only 1 of 2 ranks joined within 500 ms of the first"
    # The late rank finds no coordinator to answer it: a short timeout ends its wait sooner.
    env = dict(os.environ, VIADUCT_TIMEOUT_MS=str(int(2000 * SLOW)))
    with open(f"{d}/late.err", "w") as err:
        p = subprocess.Popen(late, stdout=subprocess.DEVNULL, stderr=err, env=env)
    deadline = time.monotonic() + BOUND
    while (p.poll() is None and time.monotonic() < deadline and
           said not in slurp(f"{d}/late.err")):
        time.sleep(0.05)
    open(go, "w").close()  # rank 1 may join now
    try:
        rc = p.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    text = slurp(f"{d}/late.err")
    check(rc != 0, f"a rank joining after the first one's window: msgrun exit 0\n{text}")
    check(said in text, f"the coordinator does not say so:\n{text[-2000:]}")


def no_finalize(d):
    """A rank that joined and exits 0 without msg_finalize: its peer sees it fail, and msgrun
    exits 1 naming it; with every rank finalizing, 0. Ranks that never join (not libmsg
    programs) make it exit 1 too, unless --allow-no-join."""
    base = [os.environ["VIADUCT_MSGRUN"], "-n", "3", "--"]
    p = subprocess.run(base + join_rank(1), capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 1 and "rank 1 exited 0 without msg_finalize" in p.stderr,
          f"exit {p.returncode}, want 1 naming rank 1:\n{p.stderr[-2000:]}")
    p = subprocess.run(base + join_rank(), capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 0 and "without msg_finalize" not in p.stderr,
          f"every rank finalizing: exit {p.returncode}\n{p.stderr[-2000:]}")
    p = subprocess.run(base + ["true"], capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 1 and "ranks 0, 1, 2 never joined the job" in p.stderr,
          f"a program that never joins: exit {p.returncode}\n{p.stderr}")
    allow = [os.environ["VIADUCT_MSGRUN"], "-n", "3", "--allow-no-join", "--", "true"]
    p = subprocess.run(allow, capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 0, f"--allow-no-join true: exit {p.returncode}\n{p.stderr}")


SCENARIOS = {f.__name__: f for f in (forward_term, second_signal, stopped_rank, msgrun_killed,
                                     timeout_grace, failure_grace, rank_signal, tty_stdin,
                                     bind_core, wait_yield, join_timeout, no_finalize)}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "rank":
        return rank_main(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(__doc__, file=sys.stderr)
        return 2
    # msgrun keeps ignored what it was started with ignored: give it the usual dispositions.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    with tempfile.TemporaryDirectory(prefix="viaduct-launcher-") as d:
        try:
            SCENARIOS[sys.argv[1]](d)
        except Skip as e:
            print("SKIP", sys.argv[1], e, flush=True)
            return SKIP
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    print("PASS", sys.argv[1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
