#!/usr/bin/env python3
"""msg-tune and the tuning file VIADUCT_PROTOCOL=auto reads (libmsg/src/protocol/tuning.hpp).

msg-tune measures (a short run: 1 round, 2 iterations, 16K to 256K) and writes a file that
parses as the format says, with this host's tables for both modes, dated, kept beside other
hosts' tables, created under the umask. A real 2-rank job (table_job) takes a table from the
file that no built-in table has, and msg-info shows it and where it came from. A file that is
malformed, that others may write, reached through a symbolic link or named but missing is
ignored with a warning naming why, and the job keeps the built-in table; a table of another
host is not used.

Binaries: VIADUCT_MSG_TUNE, VIADUCT_MSG_INFO, VIADUCT_MSGRUN, VIADUCT_TABLE_JOB.
"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SLOW, check, failures  # noqa: E402

MSG_TUNE = os.environ["VIADUCT_MSG_TUNE"]
MSG_INFO = os.environ["VIADUCT_MSG_INFO"]
MSGRUN = os.environ["VIADUCT_MSGRUN"]
TABLE_JOB = os.environ["VIADUCT_TABLE_JOB"]
HOST = socket.gethostname()
BUILT_IN = {"unrestricted": [[None, "rdma"]],
            "restricted": [[None, "rdma-write"]]}
# A table no fabric has built in, so that a job using it can only have read it from the file.
DISTINCT = [[65536, "sendrecv"], [1048576, "rdma-write"], [None, "rdma"]]


def env_with(**settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    env.update(settings)
    return env


def run(argv, env, timeout=300):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout * SLOW)


def job(env):
    """rank 0's table and the job's stderr, or (None, stderr)."""
    r = run([MSGRUN, "-n", "2", TABLE_JOB], env)
    if not check(r.returncode == 0, f"table_job exit {r.returncode}: {r.stderr}"):
        return None, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])["table"], r.stderr


def tuning_file(path, tables, mode=0o600):
    with open(path, "w") as f:
        json.dump({"format": "viaduct-libmsg-tuning", "version": 1, "tables": tables}, f)
    os.chmod(path, mode)


def table(host, mode, ranges, provider="shm"):
    return {"host": host, "provider": provider, "mode": mode, "ranges": ranges,
            "measured_at": "2026-01-02T03:04:05Z"}


def tune_writes(d):
    path = f"{d}/tuned.json"
    tuning_file(path, [table("another-host", "unrestricted", DISTINCT)], 0o644)
    old_umask = os.umask(0o027)
    try:
        r = run([MSG_TUNE, "--rounds", "1", "--iters", "2", "--max", "256K", "--output", path],
                env_with())
    finally:
        os.umask(old_umask)
    if not check(r.returncode == 0, f"msg-tune exit {r.returncode}: {r.stderr[-2000:]}"):
        return
    check(f"written to {path}" in r.stdout and "16384" in r.stdout, f"msg-tune said {r.stdout}")
    check(stat.S_IMODE(os.stat(path).st_mode) == 0o640, "the file is not 0644 less the umask")
    doc = json.load(open(path))
    check(doc["format"] == "viaduct-libmsg-tuning" and doc["version"] == 1, f"format: {doc}")
    mine = {t["mode"]: t for t in doc["tables"] if t["host"] == HOST}
    check(sorted(mine) == ["restricted", "unrestricted"], f"this host's tables: {sorted(mine)}")
    check(any(t["host"] == "another-host" for t in doc["tables"]), "another host's table lost")
    for mode, t in mine.items():
        ranges = t["ranges"]
        check(t["provider"] == "shm" and ranges and ranges[-1][0] is None and
              all(p in ("sendrecv", "rdma", "rdma-write") for _, p in ranges),
              f"{mode}: {t['provider']} {ranges}")
        sizes = [b for b, _ in ranges[:-1]]
        check(sizes == sorted(set(sizes)), f"{mode}: ranges not ascending: {ranges}")
        check(t["measured_at"].endswith("Z") and "load_average" in t["conditions"] and
              [f["bytes"] for f in t["figures"]] == [16384 << k for k in range(5)],
              f"{mode}: date, conditions or figures missing: {t}")
        # The job reads what msg-tune wrote.
        jt, _ = job(env_with(VIADUCT_TUNING=path,
                             VIADUCT_RESTRICTED="1" if mode == "restricted" else "0"))
        check(jt == ranges, f"{mode}: the job's table {jt}, the file's {ranges}")


def job_takes_the_file(d):
    path = f"{d}/distinct.json"
    tuning_file(path, [table(HOST, "unrestricted", DISTINCT),
                       table("another-host", "restricted", DISTINCT)])
    jt, err = job(env_with(VIADUCT_TUNING=path))
    check(jt == DISTINCT, f"the job's table {jt}, the file's {DISTINCT}")
    check("ignored" not in err, f"a good file warned about: {err}")
    jt, _ = job(env_with(VIADUCT_TUNING=path, VIADUCT_RESTRICTED="1"))
    check(jt == BUILT_IN["restricted"], f"another host's table used: {jt}")
    r = run([MSG_INFO, "--json"], env_with(VIADUCT_TUNING=path))
    p = json.loads(r.stdout)["protocol"]
    check(p["sources"]["unrestricted"] == f"tuned on 2026-01-02T03:04:05Z ({path})" and
          p["sources"]["restricted"] == "built-in", f"msg-info's sources: {p['sources']}")
    jt, _ = job(env_with(VIADUCT_TUNING=path, VIADUCT_PROTOCOL="rdma"))
    check(jt == [[None, "rdma"]], f"a configured protocol is not the file's to change: {jt}")


def refused(d):
    good = f"{d}/good.json"
    tuning_file(good, [table(HOST, "unrestricted", DISTINCT)])
    cases = {}
    cases["malformed"] = (f"{d}/malformed.json", "not a JSON object")
    with open(cases["malformed"][0], "w") as f:
        f.write('{"format": "viaduct-libmsg-tuning", "version": 1, "tables": [')
    cases["descending"] = (f"{d}/descending.json", "not in ascending order")
    tuning_file(cases["descending"][0],
                [table(HOST, "unrestricted", [[65536, "rdma"], [4096, "sendrecv"], [None, "rdma"]])])
    cases["writable"] = (f"{d}/writable.json", "others may write it")
    tuning_file(cases["writable"][0], [table(HOST, "unrestricted", DISTINCT)], 0o666)
    cases["link"] = (f"{d}/link.json", "cannot open it")
    os.symlink(good, cases["link"][0])
    cases["missing"] = (f"{d}/missing.json", "no such file")
    for name, (path, why) in cases.items():
        jt, err = job(env_with(VIADUCT_TUNING=path))
        check(jt == BUILT_IN["unrestricted"], f"{name}: the job's table {jt}")
        check(why in err and path in err, f"{name}: no warning naming '{why}': {err}")


def main():
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o700)
        job_takes_the_file(d)
        refused(d)
        tune_writes(d)
    print(f"msg-tune: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
