#!/usr/bin/env python3
"""Ranks started with different settings: msg_init fails on every rank with MSG_ERR_CONFIG, and
the error names the setting that differs and both values; sizes spelled 2KiB are understood. A
provider that does not exist is named with the providers libfabric has.

usage: settings_test.py   (msgrun from VIADUCT_MSGRUN, the worker from VIADUCT_TEST_WORKER)
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pylib"))
from viaduct_checks import SLOW, check, failures  # noqa: E402


def run(rank1_env):
    """Runs the worker's connect scenario on 2 ranks, rank 1 with rank1_env added."""
    exports = " ".join(f"{k}={v}" for k, v in rank1_env.items())
    script = f'if [ "$VIADUCT_RANK" = 1 ]; then export {exports}; fi; exec "$0" connect'
    cmd = [os.environ["VIADUCT_MSGRUN"], "-n", "2", "--timeout", str(60 * SLOW),
           "sh", "-c", script, os.environ["VIADUCT_TEST_WORKER"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIADUCT_") or
           k in ("VIADUCT_MSGRUN", "VIADUCT_TEST_WORKER", "VIADUCT_TEST_SLOWDOWN")}
    env["VIADUCT_EAGER_MAX"] = "4096"
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120 * SLOW)


def main():
    # The same size spelled two ways is the same setting.
    same = run({"VIADUCT_EAGER_MAX": "4KiB"})
    check(same.returncode == 0, f"4096 and 4KiB: exit {same.returncode}\n{same.stderr[-2000:]}")
    cases = [
        ({"VIADUCT_EAGER_MAX": "2KiB"}, "VIADUCT_EAGER_MAX (eager_max): 4096 here, 2048 on rank 1"),
        ({"VIADUCT_CREDITS": "5"}, "VIADUCT_CREDITS (credits): 8 here, 5 on rank 1"),
        ({"VIADUCT_ACTIVE_PEERS": "3"}, "VIADUCT_ACTIVE_PEERS (active_peers): 16 here, 3 on rank 1"),
        ({"VIADUCT_PROTOCOL": "sendrecv"}, "VIADUCT_PROTOCOL (long_protocol): auto here, "
         "sendrecv on rank 1"),
    ]
    for extra, expected in cases:
        r = run(extra)
        out = r.stdout + r.stderr
        check(r.returncode != 0, f"{extra}: the job succeeded")
        check("returned -13" in out, f"{extra}: msg_init did not fail with MSG_ERR_CONFIG\n"
              f"{out[-2000:]}")
        check(expected in out, f"{extra}: no line naming the setting ({expected!r})\n{out[-2000:]}")
        check("libmsg[-1]" not in out, f"{extra}: a line with no rank known says libmsg[-1]")
    # A provider that does not exist, on every rank: the error lists the ones that do.
    env_all = {"VIADUCT_PROVIDER": "nosuch"}
    r = subprocess.run([os.environ["VIADUCT_MSGRUN"], "-n", "2", "--timeout", str(60 * SLOW),
                        os.environ["VIADUCT_TEST_WORKER"], "connect"],
                       env={**{k: v for k, v in os.environ.items() if k != "VIADUCT_PROVIDER"},
                            **env_all}, capture_output=True, text=True, timeout=120 * SLOW)
    out = r.stdout + r.stderr
    check(r.returncode != 0 and "no libfabric provider 'nosuch'" in out and
          "the providers libfabric has here: " in out and "shm" in out.split("has here: ")[-1],
          f"an unknown provider is named with the providers there are\n{out[-2000:]}")
    if failures:
        sys.exit(1)
    print("PASS settings mismatch")


if __name__ == "__main__":
    main()
