#!/usr/bin/env python3
"""libmsg's example programs (libmsg/examples/) run as a reader would run them: under msgrun
with 1, 2, 3 and 4 ranks over shm (one host's default) and with 3 ranks over tcp. Each run
must exit 0 and print what that job must compute: hello a line per rank and the token's trip
with the provider in use, ring_sum the sum 1 + ... + n, halo the checksum of the line that
this script computes again by itself (the same initial values and stencil as halo.c),
allreduce the minimum, maximum and gcd of every rank's values, cq_poll that every message
arrived once. survivor runs with 2 to 4 ranks: its last rank fails on purpose (SIGKILL, and
once `exit`: status 3 without msg_finalize), every survivor must report the failure and rank 0
the survivors' sum, and msgrun must exit with the failed rank's status, naming it.

With `readme`, the C program in README.md's libmsg section is compiled (C99, warnings as
errors) against the tree's msg.h and libmsg.so and run likewise with 1 and 3 ranks.

usage: examples_test.py NAME PROGRAM   (NAME: hello, ring_sum, halo, allreduce, cq_poll,
                                        survivor)
       examples_test.py readme README INCLUDE_DIR... -L LIBDIR CC...
msgrun from VIADUCT_MSGRUN.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SLOW, check, failures, slurp  # noqa: E402


def expect_hello(n, provider, lines):
    want = [f"hello from rank {r} of {n}" for r in range(n)]
    want.append(f"hello: the token visited all {n} ranks over provider {provider}")
    check(sorted(lines) == sorted(want), f"hello -n {n}: printed {lines}, expected {want}")


def expect_ring_sum(n, _provider, lines):
    want = [f"ring_sum: {n} ranks, sum {n * (n + 1) // 2}"]
    check(lines == want, f"ring_sum -n {n}: printed {lines}, expected {want}")


def serial_halo(points, iterations):
    """halo.c's line after `iterations` steps, computed here: the sum of its values."""
    u = [0.0] + [float((i * 37) % 101) for i in range(points)] + [0.0]
    for _ in range(iterations):
        u = [0.0] + [0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]
                     for i in range(1, points + 1)] + [0.0]
    return sum(u)


HALO_LINE = re.compile(r"halo: (\d+) ranks, (\d+) points, (\d+) iterations, "
                       r"checksum (\S+), largest difference (\S+)$")


def expect_halo(n, _provider, lines):
    m = HALO_LINE.match(lines[0]) if len(lines) == 1 else None
    if not check(m, f"halo -n {n}: printed {lines}, expected one 'halo: ...' line"):
        return
    ranks, points, iterations = int(m.group(1)), int(m.group(2)), int(m.group(3))
    checksum, difference = float(m.group(4)), float(m.group(5))
    want = serial_halo(points, iterations)
    check(ranks == n, f"halo -n {n}: says {ranks} ranks")
    # The ranks add their slices' sums in another order than this script: equal to ~1e-15.
    check(abs(checksum - want) <= 1e-9 * abs(want),
          f"halo -n {n}: checksum {checksum}, computed here {want!r}")
    check(difference <= 1e-12, f"halo -n {n}: largest difference {difference}")


def gcd_of(values):
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g


def expect_allreduce(n, _provider, lines):
    want = [f"allreduce: {n} ranks, 1000 doubles summed on every rank, blocking and not",
            f"allreduce: min 1, max {n}, gcd {gcd_of(30 * (r + 2) for r in range(n))}",
            "allreduce: every rank checked every result"]
    check(lines == want, f"allreduce -n {n}: printed {lines}, expected {want}")


def expect_cq_poll(n, _provider, lines):
    want = f"cq_poll: {n} ranks, 200 messages from every rank to every rank, all received once"
    m = re.match(r"cq_poll: rank 0 took its (\d+) completions in (\d+) wake-ups of poll$",
                 lines[1]) if len(lines) == 2 else None
    if check(m and lines[0] == want, f"cq_poll -n {n}: printed {lines}, expected '{want}' and "
             "rank 0's completions"):
        completions, wakeups = int(m.group(1)), int(m.group(2))
        check(completions == 2 * 200 * n, f"cq_poll -n {n}: {completions} completions")
        check(1 <= wakeups <= completions, f"cq_poll -n {n}: {wakeups} wake-ups")


def expect_survivor(n, _provider, lines, how="SIGKILL"):
    last = n - 1
    how = "SIGKILL" if how == "SIGKILL" else "exit status 3 without msg_finalize"
    want = [f"survivor: rank {last} fails on purpose ({how})"]
    want += [f"survivor: rank {r}: the receive from rank {last} ended with "
             "'peer failed (exited or unreachable)'" for r in range(last)]
    want.append(f"survivor: rank {last} failed; ranks 0 to {last - 1} carried on, their sum "
                f"{last * (last + 1) // 2}")
    check(sorted(lines) == sorted(want), f"survivor -n {n}: printed {lines}, expected {want}")


EXPECT = {"hello": expect_hello, "ring_sum": expect_ring_sum, "halo": expect_halo,
          "allreduce": expect_allreduce, "cq_poll": expect_cq_poll, "survivor": expect_survivor}


def run(program, n, provider=None, args=()):
    """msgrun -n N PROGRAM ARGS with no VIADUCT_* setting but the provider; returns (status,
    stdout lines, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    if provider:
        env["VIADUCT_PROVIDER"] = provider
    cmd = [os.environ["VIADUCT_MSGRUN"], "-n", str(n), "--timeout", str(60 * SLOW), program, *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=100 * SLOW)
    return r.returncode, r.stdout.splitlines(), r.stderr


def check_survivor(program):
    """The last rank fails; the job's status is its own and msgrun names it."""
    # (ranks, VIADUCT_PROVIDER, the argument, msgrun's status, what msgrun says of the rank)
    runs = [(2, None, "kill", 137, "killed by SIGKILL"), (3, None, "kill", 137, "killed by SIGKILL"),
            (4, None, "kill", 137, "killed by SIGKILL"), (3, "tcp", "kill", 137, "killed by SIGKILL"),
            (3, None, "exit", 3, "exited with status 3")]
    for n, asked, how, want_status, said in runs:
        status, lines, err = run(program, n, asked, [how])
        label = f"survivor {how} -n {n}" + (f" over {asked}" if asked else "")
        if check(status == want_status, f"{label}: exit status {status}, expected {want_status}"
                 f"\n{err[-3000:]}"):
            expect_survivor(n, None, lines, "SIGKILL" if how == "kill" else "exit")
            check(f"msgrun: rank {n - 1} {said}" in err, f"{label}: msgrun did not say "
                  f"'rank {n - 1} {said}':\n{err[-3000:]}")
        print(f"{label}: exit {status}, {len(lines)} lines", flush=True)


def check_example(name, program):
    if name == "survivor":
        check_survivor(program)
        return
    # (ranks, VIADUCT_PROVIDER, the provider msg_get_info reports)
    runs = [(1, None, "self"), (2, None, "shm"), (3, None, "shm"), (4, None, "shm"),
            (3, "tcp", "tcp;ofi_rxm")]
    for n, asked, reported in runs:
        status, lines, err = run(program, n, asked)
        label = f"{name} -n {n}" + (f" over {asked}" if asked else "")
        if check(status == 0, f"{label}: exit status {status}\n{err[-3000:]}"):
            EXPECT[name](n, reported, lines)
        print(f"{label}: exit {status}, {len(lines)} lines", flush=True)


def readme_program(readme):
    """The C program in README.md's libmsg section, or None."""
    text = slurp(readme)
    at = text.find("\n## libmsg\n")
    m = re.search(r"^```c\n(.*?)^```", text[at:], re.S | re.M) if at >= 0 else None
    return m.group(1) if m else None


def check_readme(args):
    readme, rest = args[0], args[1:]
    cut = rest.index("-L")
    includes, libdir, cc = rest[:cut], rest[cut + 1], rest[cut + 2:]
    source = readme_program(readme)
    if not check(source and "int main(" in source, "README.md's libmsg section has no C program"):
        return
    with tempfile.TemporaryDirectory(prefix="viaduct-readme-") as d:
        with open(os.path.join(d, "ring.c"), "w") as f:
            f.write(source)
        exe = os.path.join(d, "ring")
        cmd = cc + ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
        cmd += [f"-I{i}" for i in includes]
        cmd += [os.path.join(d, "ring.c"), "-o", exe, f"-L{libdir}", "-lmsg", f"-Wl,-rpath,{libdir}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120 * SLOW)
        if not check(r.returncode == 0, f"README.md's program does not compile:\n{r.stderr[-3000:]}"):
            return
        for n in (1, 3):
            status, lines, err = run(exe, n)
            want = sorted(f"rank {r} of {n} got {(r - 1) % n}" for r in range(n))
            if check(status == 0, f"README.md's program, -n {n}: exit status {status}\n{err[-3000:]}"):
                check(sorted(lines) == want, f"README.md's program, -n {n}: printed {lines}, "
                      f"expected {want}")
            print(f"readme -n {n}: exit {status}, {len(lines)} lines", flush=True)


def main():
    name = sys.argv[1]
    if name == "readme":
        check_readme(sys.argv[2:])
    else:
        check_example(name, sys.argv[2])
    print(f"{name}: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
