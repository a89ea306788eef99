#!/usr/bin/env python3
"""The command line every installed program shares (common/include/viaduct/cli.hpp).

usage: cli_conventions.py VERSION NAME=PATH...

For every program: --version prints "NAME (viaduct) VERSION" and exits 0; --help prints the
usage on stdout and exits 0; an unknown option is one line on stderr naming it, with a pointer
to --help, and exit 2. Where a program has them: --name=value and --name value, -n4 and -n 4,
the size forms (4K, 4KiB, 4k, 1g, 1G) and a bad size naming its option; JSON that stays valid
for a path with a quote in it. msgrun's exit 130 after SIGINT is launcher_test.py's.
"""
import json
import os
import subprocess
import sys
import tempfile

VERSION = sys.argv[1]
PROGRAMS = dict(arg.split("=", 1) for arg in sys.argv[2:])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, counts, failures  # noqa: E402


def run(name, *args, cwd=None):
    # No terminal on stderr: no progress line either.
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    return subprocess.run([PROGRAMS[name], *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


def under_msgrun(ranks, name, *args):
    return run("msgrun", f"-n{ranks}", "--", PROGRAMS[name], *args)


def usage_error(r, *needles):
    """Exit 2 and exactly one line on stderr naming every needle and --help."""
    lines = r.stderr.splitlines()
    return (r.returncode == 2 and len(lines) == 1 and "--help" in lines[0] and
            all(n in lines[0] for n in needles))


def common_conventions(name, prefix=()):
    shown = " ".join([name, *prefix])
    r = run(name, *prefix, "--version")
    check(r.returncode == 0 and r.stdout == f"{shown} (viaduct) {VERSION}\n",
          f"{shown} --version: {r.returncode} {r.stdout!r}")
    r = run(name, *prefix, "--help")
    check(r.returncode == 0 and "--version" in r.stdout and len(r.stdout.splitlines()) > 3
          and r.stderr == "", f"{shown} --help: {r.returncode} {r.stdout[:200]!r}")
    r = run(name, *prefix, "--no-such-option")
    check(usage_error(r, "--no-such-option"),
          f"{shown} --no-such-option: {r.returncode} {r.stderr!r}")


def json_of(r, what):
    try:
        return json.loads(r.stdout)
    except ValueError:
        check(False, f"{what}: not JSON: {r.returncode} {r.stdout[:300]!r} {r.stderr[-300:]!r}")
        return None


def sortgen_and_sortcheck(d):
    # A path with a quote and a backslash: printed as JSON, it must come back the same.
    out = os.path.join(d, 'in "quoted" \\ name')
    r = run("sortgen", "--json", "-p2", "--record-size=100", "--key-size", "10", "4K", out)
    j = json_of(r, "sortgen --json")
    if j is not None:
        check(j["records"] == 4000 and [p["path"] for p in j["partitions"]] ==
              [out + ".0", out + ".1"], f"sortgen --json: {j}")
        check(r.stderr == "", f"sortgen: stderr without a terminal: {r.stderr!r}")
    # Records are counted as people count them: 4k is 4000, 4Ki is 4096.
    for size, records in [("4Ki", 4096), ("4k", 4000), ("2k", 2000), ("2", 2)]:
        r = run("sortgen", "--json", size, os.path.join(d, "s"))
        j = json_of(r, f"sortgen {size}")
        check(j is not None and j["records"] == records, f"sortgen {size}: {j}")
    r = run("sortgen", "--partitions", "2", "-p3", "--json", "3", os.path.join(d, "last"))
    j = json_of(r, "sortgen -p twice")
    check(j is not None and len(j["partitions"]) == 3, "an option given twice: the last wins")
    r = run("sortgen", "--record-size=1x", "4", os.path.join(d, "bad"))
    check(usage_error(r, "--record-size", "1x"), f"sortgen bad size: {r.stderr!r}")
    r = run("sortgen", "4Q", os.path.join(d, "bad"))
    check(usage_error(r, "RECORDS", "4Q"), f"sortgen bad RECORDS: {r.stderr!r}")
    r = run("sortcheck", "--json", "--record-size=100", out + ".0", out + ".1")
    j = json_of(r, "sortcheck --json")
    check(j is not None and r.returncode == 1 and j["records"] == 4000,
          f"sortcheck --json: {r.returncode} {j}")
    r = run("sortcheck", "--expect-records", "4K", "-q", out + ".0", out + ".1")
    check(r.returncode == 1 and "differs" not in r.stderr and "expected" not in r.stderr,
          f"sortcheck --expect-records 4K: {r.returncode} {r.stderr!r}")
    r = run("sortcheck", "--expect-records", "4Ki", "-q", out + ".0", out + ".1")
    check(r.returncode == 1 and "4000 records, expected 4096" in r.stderr,
          f"sortcheck --expect-records 4Ki: {r.returncode} {r.stderr!r}")


def sortapp(d):
    for command in ["local", "run", "job", "probe"]:
        common_conventions("sortapp", (command,))
    r = run("sortapp", "probe", "--io-size", "4Q")
    check(usage_error(r, "--io-size", "4Q"), f"sortapp probe --io-size 4Q: {r.stderr!r}")
    r = run("sortapp", "probe", "--io-depth=0")
    check(usage_error(r, "--io-depth"), f"sortapp probe --io-depth=0: {r.stderr!r}")
    r = run("sortapp", "probe", "--scratch", d, "--probe-size=4M", "--max-seconds", "1",
            "--no-cache", "--json")
    j = json_of(r, "sortapp probe --json")
    check(j is not None and j.get("read_mb_s", 0) > 0, f"sortapp probe --json: {j}")
    r = run("sortapp", "--help")
    check(all(c in r.stdout for c in ["local", "run", "job"]), "sortapp --help lists commands")
    r = run("sortapp", "frobnicate")
    check(usage_error(r, "frobnicate"), f"sortapp unknown command: {r.stderr!r}")
    r = run("sortapp")
    check(usage_error(r), f"sortapp without a command: {r.stderr!r}")
    src = os.path.join(d, "sort-in")
    check(run("sortgen", "2000", src).returncode == 0, "sortgen for sortapp")
    for memory, want in [(["--memory", "1g"], 1 << 30), (["--memory=1G"], 1 << 30),
                         (["-m64M"], 64 << 20), (["-m", "64MiB"], 64 << 20)]:
        out = os.path.join(d, "sort-out")
        r = run("sortapp", "local", *memory, "--no-measure", "--no-progress", "--json", src, out)
        j = json_of(r, f"sortapp local {memory}")
        check(j is not None and j["memory_budget"] == want,
              f"sortapp local {memory}: budget {j and j['memory_budget']}, want {want}")
    r = run("sortapp", "local", "--memory", "1gx", src, os.path.join(d, "x"))
    check(r.returncode == 2 and "--memory" in r.stderr, f"--memory 1gx: {r.stderr!r}")
    r = run("sortapp", "run", "-n2", "--memory", "lots", "--input", "a", "--output", "b")
    check(usage_error(r, "--memory", "lots"), f"sortapp run --memory lots: {r.stderr!r}")


def sansim():
    for form in [["--message-bytes", "4K"], ["--message-bytes=4KiB"], ["--message-bytes=4096"]]:
        r = run("sansim", "--topology=crossbar:4", *form, "--json")
        j = json_of(r, f"sansim {form}")
        # All-to-all on 4 nodes: 12 messages of 4 KiB.
        check(j is not None and j["payload_injected"] == 12 * 4096,
              f"sansim {form}: {j and j['payload_injected']}")
    r = run("sansim", "--message-bytes", "4Q")
    check(usage_error(r, "--message-bytes", "4Q"), f"sansim bad size: {r.stderr!r}")
    r = run("sansim", "--nodes", "1")
    check(usage_error(r, "--nodes"), f"sansim --nodes 1: {r.stderr!r}")


def msgrun():
    for form in [["-n2"], ["-n", "2"], ["--np=2"], ["--np", "2"]]:
        r = run("msgrun", *form, "--allow-no-join", "--", "true")
        check(r.returncode == 0, f"msgrun {form} true: {r.returncode} {r.stderr!r}")
    r = run("msgrun", "-n2", "--allow-no-join", "--", "sh", "-c", "exit 3")
    check(r.returncode == 3, f"msgrun: a rank's status: {r.returncode}")
    r = run("msgrun", "-n0", "true")
    check(usage_error(r, "--np"), f"msgrun -n0: {r.stderr!r}")
    r = run("msgrun", "true")
    check(usage_error(r, "-n N"), f"msgrun without -n: {r.stderr!r}")


def msg_info():
    for form in [["-n64"], ["-n", "64"], ["--np=64"], ["--np", "64"]]:
        j = json_of(run("msg-info", *form, "--json"), f"msg-info {form}")
        check(j is not None and j["receive_memory"]["ranks"] == 64, f"msg-info {form}: {j}")
    r = run("msg-info", "-n0")
    check(usage_error(r, "--np"), f"msg-info -n0: {r.stderr!r}")


def datapump():
    r = under_msgrun(2, "datapump", "--no-disk", "--bytes=1M", "--batch", "64KiB", "--json")
    j = json_of(r, "datapump --json")
    check(j is not None and j["bytes"] == 1 << 20 and j["river"]["batch_bytes"] == 64 << 10,
          f"datapump sizes: {j}")
    r = run("datapump", "--no-disk", "--block", "1x")
    check(usage_error(r, "--block", "1x"), f"datapump bad size: {r.stderr!r}")


def help_reads_plainly():
    """--help shows no option in CLI11's raw notation ("--a,--b{false}") and every option's
    value has a name its description uses."""
    for name in PROGRAMS:
        r = run(name, "--help")
        check("{false}" not in r.stdout and "{true}" not in r.stdout,
              f"{name} --help shows a raw flag: {r.stdout[:2000]!r}")
        check(" S seconds" not in r.stdout and "N:INT" not in r.stdout.split("--timeout", 1)[-1]
              .split("\n", 1)[0], f"{name} --help: --timeout's value and text disagree")


def benchmarks():
    if "msg-pingpong" in PROGRAMS:
        r = under_msgrun(2, "msg-pingpong", "--min=1K", "--max", "4k", "--iters=3", "--warmup",
                         "0", "--json")
        j = json_of(r, "msg-pingpong")
        check(j is not None and [x["bytes"] for x in j["results"]] == [1024, 2048, 4096],
              f"msg-pingpong sizes: {j and [x['bytes'] for x in j['results']]}")
        r = run("msg-pingpong", "--max", "4X")
        check(usage_error(r, "--max", "4X"), f"msg-pingpong bad size: {r.stderr!r}")
    if "msg-alltoall" in PROGRAMS:
        r = under_msgrun(2, "msg-alltoall", "--bytes=16KiB", "--iters", "3", "--json")
        j = json_of(r, "msg-alltoall")
        check(j is not None and "16384" in r.stdout, f"msg-alltoall --bytes=16KiB: {r.stdout!r}")
    if "msg-coll" in PROGRAMS:
        # Three ranks (not a power of two); every size's result is checked before it prints.
        r = under_msgrun(3, "msg-coll", "--min-bytes=4", "--max-bytes", "1KiB", "--iters", "3",
                         "--json")
        j = json_of(r, "msg-coll")
        got = j and [(x["collective"], x["bytes"]) for x in j["results"]]
        want = [(c, b) for c in ("bcast", "allreduce", "alltoall") for b in (4, 16, 64, 256, 1024)]
        check(got == want, f"msg-coll cells: {got}")
        r = run("msg-coll", "--collectives", "bcast,scan")
        check(usage_error(r, "scan"), f"msg-coll bad collective: {r.stderr!r}")
    if "memcpy-bw" in PROGRAMS:
        r = run("memcpy-bw", "--bytes=1M", "--reps", "1", "--threads=1", "--json")
        check(json_of(r, "memcpy-bw") is not None and "1048576" in r.stdout,
              f"memcpy-bw --bytes=1M: {r.stdout!r}")
    if "rio-bench" in PROGRAMS:
        r = under_msgrun(2, "rio-bench", "--blocks=64K", "--depths", "1", "--file", "1M",
                         "--bytes=1MiB", "--repeat", "1", "--json")
        check(json_of(r, "rio-bench") is not None and "65536" in r.stdout,
              f"rio-bench sizes: {r.stdout[:300]!r}")


def main():
    for name in PROGRAMS:
        common_conventions(name)
    with tempfile.TemporaryDirectory() as d:
        sortgen_and_sortcheck(d)
        sortapp(d)
        help_reads_plainly()
    sansim()
    msgrun()
    msg_info()
    datapump()
    benchmarks()
    print(f"{counts['checks'] - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
