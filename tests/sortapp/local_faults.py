#!/usr/bin/env python3
"""`sortapp local` under faults: a signal in each phase and an impossible memory budget.

For each phase (phase 1 and phase 2 of a two-pass sort) and each of SIGTERM, SIGINT and SIGHUP,
SORTAPP_TEST_HOLD holds the sort at the start of the phase (it writes its pid to a file and
waits there: no clock involved); the test sends the signal and checks that the process dies
by that very signal, names it, and leaves no output, temporary output or run directory, and
that the input is unchanged. Then `--memory 1T` under an address-space limit must fail with a
clear message and leave nothing. Binaries from SORTAPP_BIN, SORTGEN_BIN.
"""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, failures, sha  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]


def leftovers(d):
    return sorted(n for n in os.listdir(d) if n not in ("in", "held", "held.tmp"))


def interrupted(d, phase, sig):
    held = f"{d}/held"
    env = dict(os.environ, SORTAPP_TEST_HOLD=f"sortapp local|{phase}|{held}")
    # 8 MiB of memory for 20 MB of records: phase 1 writes runs, phase 2 merges them.
    proc = subprocess.Popen([SORTAPP, "local", "--memory", "8M", "--no-measure", "--no-direct",
                             f"{d}/in", f"{d}/out"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not os.path.exists(held):
        time.sleep(0.01)
    if not os.path.exists(held):
        proc.kill()
        out, err = proc.communicate()
        check(False, f"{phase}: never reached (exit {proc.returncode}): {err[-500:]}")
        return
    # The hold stays in place until the process has ended: the signal, not a race between
    # the signal thread and the rest of the phase, is what ends it.
    os.kill(int(open(held).read()), sig)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    os.remove(held)
    name = signal.Signals(sig).name
    check(proc.returncode == -sig, f"{phase} {name}: exit {proc.returncode}, not the signal")
    check(f"interrupted by {name}" in err, f"{phase} {name}: message {err[-300:]!r}")
    check(leftovers(d) == [], f"{phase} {name}: left {leftovers(d)}")


def address_space_limit(d):
    """`sortapp run` (msgrun, the nodes and the monitor) under a 200 MB address-space limit,
    too low to start its threads: each process names the failure and exits non-zero, none
    aborts, and nothing is left."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (200_000 << 10, 200_000 << 10))
    r = subprocess.run([SORTAPP, "run", "-n", "2", "--same-input", "--input", f"{d}/in", "--output",
                        f"{d}/out.{{rank}}", "--timeout", "120"], capture_output=True, text=True,
                       preexec_fn=limit, timeout=300)
    check(r.returncode > 0, f"sortapp run under RLIMIT_AS: exit {r.returncode}")
    check("terminate called" not in r.stderr and "core dumped" not in r.stderr and
          "signal 6" not in r.stderr and "SIGABRT" not in r.stderr,
          f"sortapp run under RLIMIT_AS: a process aborted: {r.stderr[-600:]!r}")
    check("out of memory" in r.stderr or "was refused" in r.stderr,
          f"sortapp run under RLIMIT_AS: the failure is not named: {r.stderr[-600:]!r}")
    check(leftovers(d) == [], f"sortapp run under RLIMIT_AS: left {leftovers(d)}")


def main():
    d = tempfile.mkdtemp(prefix="sortapp-local-faults-")
    try:
        subprocess.run([SORTGEN, "200000", f"{d}/in"], check=True, capture_output=True)
        before = sha(f"{d}/in")
        for phase in ["phase 1", "phase 2"]:
            for sig in [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]:
                interrupted(d, phase, sig)

        # An address-space limit the one-pass plan cannot fit in (the 20 MB input and its
        # keys). Sanitizer runtimes reserve terabytes of address space, so there the limit
        # cannot be set and this case is not run (said, not counted).
        if os.environ.get("VIADUCT_SANITIZE", "none") != "none":
            print("--memory 1T under RLIMIT_AS: not run in a sanitizer build", flush=True)
        else:
            def limit():
                resource.setrlimit(resource.RLIMIT_AS, (40 << 20, 40 << 20))
            r = subprocess.run([SORTAPP, "local", "--memory", "1T", "--no-measure", f"{d}/in",
                                f"{d}/out"], capture_output=True, text=True, preexec_fn=limit,
                               timeout=120)
            check(r.returncode > 0, f"--memory 1T under a 40 MiB limit: exit {r.returncode}")
            check("out of memory" in r.stderr, f"--memory 1T: message {r.stderr[-300:]!r}")
            check(leftovers(d) == [], f"--memory 1T: left {leftovers(d)}")
            address_space_limit(d)
        check(sha(f"{d}/in") == before, "the input changed")
    finally:
        shutil.rmtree(d)
    print("local_faults:", "FAILED" if failures else "ok", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
