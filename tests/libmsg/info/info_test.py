#!/usr/bin/env python3
"""msg-info and msgrun --info say what a job started here does: the protocol table and eager
limit a real 2-rank job reports (table_job under msgrun) for the same settings, the settings
as the environment gives them, msgrun --receive-memory's figure, and an exit status of 1,
naming the problem, wherever msg_init would fail.

Binaries: VIADUCT_MSG_INFO, VIADUCT_MSGRUN, VIADUCT_TABLE_JOB.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SLOW, check, failures  # noqa: E402

MSG_INFO = os.environ["VIADUCT_MSG_INFO"]
MSGRUN = os.environ["VIADUCT_MSGRUN"]
TABLE_JOB = os.environ["VIADUCT_TABLE_JOB"]


def clean_env(**settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_")}
    env.update(settings)
    return env


def run(argv, env):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120 * SLOW)


def info(env, *args):
    r = run([MSG_INFO, "--json", *args], env)
    return r, (json.loads(r.stdout) if r.stdout.strip() else None)


def job_table(env):
    """What rank 0 of a real 2-rank job reports: provider, eager_max, mode and table."""
    r = run([MSGRUN, "-n", "2", TABLE_JOB], env)
    if not check(r.returncode == 0, f"table_job under msgrun exit {r.returncode}: {r.stderr}"):
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def same_table(settings):
    """msg-info's table for the mode in force equals the job's, and so does eager_max."""
    env = clean_env(**settings)
    r, report = info(env)
    if not check(r.returncode == 0 and report, f"{settings}: msg-info exit {r.returncode}"):
        return
    job = job_table(env)
    if job is None:
        return
    p = report["protocol"]
    mode = "restricted" if job["restricted"] else "unrestricted"
    check(p["mode"] == mode, f"{settings}: msg-info says mode {p['mode']}, the job {mode}")
    check(p["provider"] == job["provider"],
          f"{settings}: msg-info shows provider {p['provider']}, the job used {job['provider']}")
    shown = [[x["max_bytes"], x["protocol"]] for x in p["tables"][mode]]
    check(shown == job["table"], f"{settings}: msg-info's table {shown}, the job's {job['table']}")
    check(p["eager_max"] == job["eager_max"],
          f"{settings}: eager_max {p['eager_max']} against the job's {job['eager_max']}")


def settings_and_memory():
    env = clean_env(VIADUCT_CREDITS="4", VIADUCT_BUFFER_SIZE="64K")
    r, report = info(env, "-n", "5")
    if not check(r.returncode == 0 and report, f"msg-info exit {r.returncode}: {r.stderr}"):
        return
    by_name = {s["name"]: s for s in report["settings"]}
    check(by_name["VIADUCT_CREDITS"] == {"name": "VIADUCT_CREDITS", "environment": "4",
                                         "source": "environment", "value": "4"},
          f"credits: {by_name['VIADUCT_CREDITS']}")
    check(by_name["VIADUCT_TIMEOUT_MS"]["source"] == "default", "an unset setting's source")
    check(isinstance(report["verbs_devices"], list), "no list of RDMA devices")
    check([x["launcher"] for x in report["launchers"]] == ["msgrun", "srun --mpi=pmix", "mpirun"],
          f"what each launcher does on a failure: {report.get('launchers')}")
    check(by_name["VIADUCT_BUFFER_SIZE"]["value"] == "65536",
          f"buffer size: {by_name['VIADUCT_BUFFER_SIZE']}")
    check(by_name["VIADUCT_TIMEOUT_MS"]["environment"] is None, "an unset setting shown as set")
    check(len(by_name) == len(report["settings"]), "a setting listed twice")
    m = run([MSGRUN, "-n", "5", "--receive-memory", "--json"], env)
    want = json.loads(m.stdout)["bytes_per_rank"] if m.returncode == 0 else None
    check(report.get("receive_memory", {}).get("bytes_per_rank") == want,
          f"receive memory {report.get('receive_memory')} against msgrun's {want}")
    text = run([MSG_INFO], env).stdout
    check(" * VIADUCT_BUFFER_SIZE" in text and "(set to '64K')" in text,
          f"the text does not mark the setting: {text}")
    version = run([MSGRUN, "--version"], env).stdout.split()[-1]
    check(report["version"] == version, f"version {report['version']} against msgrun's {version}")
    check(any(t["name"] == "ofi" and t["built"] for t in report["transports"]), "no ofi")


def refusals():
    r, report = info(clean_env(VIADUCT_EAGER_MAX="abc"))
    check(r.returncode == 1 and report and "config_error" in report,
          f"a bad setting: exit {r.returncode}, {report and report.get('config_error')}")
    check("VIADUCT_EAGER_MAX=abc" in r.stderr, f"the bad setting is not named: {r.stderr}")
    r, report = info(clean_env(VIADUCT_PROVIDER="nosuch"))
    check(r.returncode == 1 and report and "nosuch" in report.get("provider_error", ""),
          f"an unknown provider: exit {r.returncode}, {report and report.get('provider_error')}")
    r = run([MSG_INFO], clean_env(VIADUCT_PROVDER="tcp"))
    check(r.returncode == 0 and "did you mean VIADUCT_PROVIDER" in r.stderr,
          f"a misspelled setting: exit {r.returncode}, {r.stderr}")


def msgrun_info():
    env = clean_env(VIADUCT_RESTRICTED="1")
    a = run([MSGRUN, "--info", "--json"], env)
    b = run([MSG_INFO, "--json"], env)
    check(a.returncode == 0 and json.loads(a.stdout) == json.loads(b.stdout),
          f"msgrun --info differs from msg-info: {a.stdout} / {b.stdout}")
    c = run([MSGRUN, "--info", "--receive-memory"], env)
    check(c.returncode == 2, f"--info --receive-memory: exit {c.returncode}")
    # msgrun runs msg-info for --info rather than link the report: loading libfabric would
    # let its providers' libraries install signal handlers in the launcher.
    ldd = run(["ldd", MSGRUN], env)
    check(ldd.returncode == 0 and "libfabric" not in ldd.stdout, f"msgrun links: {ldd.stdout}")


def main():
    same_table({})
    same_table({"VIADUCT_RESTRICTED": "1"})
    same_table({"VIADUCT_PROVIDER": "tcp"})
    same_table({"VIADUCT_PROTOCOL": "sendrecv", "VIADUCT_EAGER_MAX": "4096"})
    settings_and_memory()
    refusals()
    msgrun_info()
    print(f"msg-info: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
