#!/usr/bin/env python3
"""datapump under msgrun: byte-exact copies, refusals, errors and interruptions.

Copies of 0 B, 1 B, block - 1, block + 1 and a few MiB (not a multiple of the block) must
equal their input (compared byte for byte), over shm and tcp, with io_uring and with the
pread/pwrite threads, O_DIRECT and buffered, two ranks of two and of three; the output
keeps the input's permission bits and no temporary file is left. The input must never be
overwritten (same path, symlink, hard link); a missing input, a missing output directory or
an output that is a directory fail with a clear message and leave nothing; a copy stopped by
a signal (held at a known point by VIADUCT_DATAPUMP_HOLD, no clock involved) leaves neither
output nor temporary file. --help, --version, bad arguments, too few ranks, --json and
--no-disk are checked too. Binaries from MSGRUN_BIN and DATAPUMP_BIN.
"""
import filecmp
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

MSGRUN = os.environ["MSGRUN_BIN"]
DATAPUMP = os.environ["DATAPUMP_BIN"]
SLOWDOWN = int(os.environ.get("VIADUCT_TEST_SLOWDOWN", "1"))
BLOCK = 64 * 1024
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    env["VIADUCT_TEST_SLOWDOWN"] = str(SLOWDOWN)
    env.update(extra or {})
    return env


def pump(ranks, args, env=None, timeout=120):
    """msgrun -n RANKS datapump ARGS; returns (exit status, stdout, stderr)."""
    cmd = [MSGRUN, "-n", str(ranks), "--timeout", str(timeout * SLOWDOWN), DATAPUMP] + args
    p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(env),
                       timeout=timeout * SLOWDOWN + 60)
    return p.returncode, p.stdout, p.stderr


def write_input(path, size, mode=0o640):
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    os.chmod(path, mode)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def leftovers(d, keep):
    return sorted(n for n in os.listdir(d) if n not in keep)


def copies(d):
    sizes = [0, 1, BLOCK - 1, BLOCK + 1, 3 * 1024 * 1024 + 7]
    # name, ranks, source rank, sink rank, environment, options
    setups = [
        ("shm, io_uring, O_DIRECT", 2, 0, 1, {"VIADUCT_PROVIDER": "shm"}, ["--direct"]),
        ("tcp, threads, buffered", 2, 0, 1, {"VIADUCT_PROVIDER": "tcp;ofi_rxm"},
         ["--io", "threads", "--no-direct"]),
        ("restricted, rank 2 to rank 1 of 3, page cache", 3, 2, 1, {"VIADUCT_RESTRICTED": "1"},
         []),
    ]
    for name, ranks, source, sink, env, extra in setups:
        for size in sizes:
            src, out = f"{d}/in-{size}", f"{d}/out-{size}"
            write_input(src, size)
            # Small batches and few credits: many batches, flow control at work.
            args = ["--from", f"{source}:{src}", "--to", f"{sink}:{out}", "--block", str(BLOCK),
                    "--batch", "16K", "--credits", "2", "--depth", "3"] + extra
            rc, so, se = pump(ranks, args, env)
            what = f"{name}, {size} B"
            check(rc == 0, f"{what}: exit {rc}: {se[-400:]}")
            check(os.path.exists(out) and filecmp.cmp(src, out, shallow=False),
                  f"{what}: output differs from the input")
            if os.path.exists(out):
                check(stat.S_IMODE(os.stat(out).st_mode) == 0o640, f"{what}: output mode")
                os.remove(out)
            check(f"{size} bytes" in so, f"{what}: report {so[-300:]!r}")
            if "--direct" not in extra:  # the page cache unless asked
                check("O_DIRECT" not in so, f"{what}: O_DIRECT unasked: {so[-300:]!r}")
            os.remove(src)
        check(leftovers(d, []) == [], f"{name}: left {leftovers(d, [])}")


def refusals(d):
    src = f"{d}/in"
    write_input(src, 200000)
    before = digest(src)
    os.symlink(src, f"{d}/link")
    os.link(src, f"{d}/hard")
    for target in ["in", "link", "hard"]:
        rc, so, se = pump(2, ["--from", f"0:{src}", "--to", f"1:{d}/{target}"])
        check(rc == 1 and "refusing to overwrite the input" in se,
              f"output {target} = input: exit {rc}, {se[-300:]!r}")
    check(digest(src) == before, "the input changed")
    check(leftovers(d, ["in", "link", "hard"]) == [], f"refusals left {leftovers(d, ['in', 'link', 'hard'])}")
    # An existing output that is another file is replaced.
    write_input(f"{d}/old", 10)
    rc, so, se = pump(2, ["--from", f"0:{src}", "--to", f"1:{d}/old"])
    check(rc == 0 and filecmp.cmp(src, f"{d}/old", shallow=False), f"replacing an output: {se[-300:]!r}")
    for name in ["link", "hard", "old"]:
        os.remove(f"{d}/{name}")


def errors(d):
    src = f"{d}/in"
    cases = [
        ("missing input", ["--from", f"0:{d}/nothing", "--to", f"1:{d}/out"], "cannot open"),
        ("missing output directory", ["--from", f"0:{src}", "--to", f"1:{d}/no/out"],
         "cannot create a temporary file"),
        ("output is a directory", ["--from", f"0:{src}", "--to", f"1:{d}"], "is a directory"),
        ("input is a directory", ["--from", f"0:{d}", "--to", f"1:{d}/out"], "not a regular file"),
        # Anyone could swap the file in a directory every user may write without the sticky
        # bit: refused before anything is written there.
        ("output directory writable by all", ["--from", f"0:{src}", "--to", f"1:{d}/open/out"],
         "writable by every user and not sticky"),
    ]
    os.mkdir(f"{d}/open")
    os.chmod(f"{d}/open", 0o777)
    for name, args, message in cases:
        rc, so, se = pump(2, args)
        check(rc == 1 and message in se, f"{name}: exit {rc}, {se[-300:]!r}")
        check(leftovers(d, ["in", "open"]) == [], f"{name}: left {leftovers(d, ['in', 'open'])}")
    check(os.listdir(f"{d}/open") == [], f"open directory: left {os.listdir(f'{d}/open')}")
    os.rmdir(f"{d}/open")
    rc, so, se = pump(1, ["--from", f"0:{src}", "--to", f"1:{d}/out"])
    check(rc == 2 and "need 2 ranks" in se, f"too few ranks: exit {rc}, {se[-300:]!r}")


def interrupted(d):
    """SIGTERM to the whole job, then to the sink alone, while the temporary output exists."""
    src = f"{d}/in"
    for whom in ["job", "sink"]:
        held = f"{d}/held"
        cmd = [MSGRUN, "-n", "2", "--timeout", str(120 * SLOWDOWN), DATAPUMP,
               "--from", f"0:{src}", "--to", f"1:{d}/out"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=clean_env({"VIADUCT_DATAPUMP_HOLD": held}))
        deadline = time.monotonic() + 60 * SLOWDOWN
        while time.monotonic() < deadline and proc.poll() is None and not os.path.exists(held):
            time.sleep(0.01)
        if not os.path.exists(held):
            proc.kill()
            check(False, f"{whom}: never reached the hold point: {proc.communicate()[1][-300:]}")
            continue
        temps = [n for n in os.listdir(d) if ".datapump-" in n]
        check(len(temps) == 1, f"{whom}: temporary output while held: {temps}")
        # The hold file is written whole before the sink waits; read until it is.
        text = ""
        while not text.endswith("\n") and time.monotonic() < deadline:
            text = open(held).read()
        pid = int(text)
        os.kill(proc.pid if whom == "job" else pid, signal.SIGTERM)
        so, se = proc.communicate(timeout=120 * SLOWDOWN)
        os.remove(held)
        check(proc.returncode != 0, f"{whom}: msgrun exit {proc.returncode}")
        if whom == "sink":
            check("rank 1 killed by SIGTERM" in se, f"sink: msgrun said {se[-300:]!r}")
        check(leftovers(d, ["in"]) == [], f"{whom}: left {leftovers(d, ['in'])}")


def cli_and_json(d):
    for flag, text in [("--help", "datapump --from RANK:INPUT"), ("--version", "datapump (viaduct)")]:
        p = subprocess.run([DATAPUMP, flag], capture_output=True, text=True, env=clean_env())
        check(p.returncode == 0 and text in p.stdout, f"{flag}: {p.returncode} {p.stdout[:100]!r}")
    for args, message in [(["--bogus"], "unknown option --bogus"),
                          (["--from", "0:x"], "are needed"),
                          (["--no-disk", "--bytes", "12Q"], "--bytes: '12Q' is not a size"),
                          (["--no-disk", "--credits", "0"], "--credits: Value 0 not in range"),
                          (["--no-disk", "--from", "0:x"], "--no-disk takes ranks"),
                          (["--from", "1:a", "--to", "1:b"], "must be different ranks"),
                          (["stray"], "unexpected argument 'stray'")]:
        p = subprocess.run([DATAPUMP] + args, capture_output=True, text=True, env=clean_env())
        check(p.returncode == 2 and message in p.stderr and len(p.stderr.splitlines()) == 1,
              f"{args}: {p.returncode} {p.stderr!r}")
    src = f"{d}/in"
    rc, so, se = pump(2, ["--from", f"0:{src}", "--to", f"1:{d}/out", "--json"])
    try:
        j = json.loads(so)
        check(j["bytes"] == os.path.getsize(src) and j["mb_per_s"] > 0 and j["mode"] == "disk",
              f"--json: {so!r}")
        check(j["sink"]["cpu_seconds"] >= 0 and j["source"]["rank"] == 0 and j["sink"]["rank"] == 1,
              f"--json ends: {so!r}")
    except (ValueError, KeyError) as e:
        check(False, f"--json output {so!r}: {e}")
    os.remove(f"{d}/out")
    n = 3 * 1024 * 1024 + 5
    rc, so, se = pump(2, ["--no-disk", "--bytes", str(n), "--json"])
    try:
        check(rc == 0 and json.loads(so)["bytes"] == n, f"--no-disk: {rc} {so!r} {se[-200:]!r}")
    except ValueError as e:
        check(False, f"--no-disk output {so!r}: {e}")


def main():
    d = tempfile.mkdtemp(prefix="datapump-test-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        copies(d)
        refusals(d)
        errors(d)
        interrupted(d)
        cli_and_json(d)
    finally:
        subprocess.run(["rm", "-rf", d])
    print(f"{len(failures)} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
