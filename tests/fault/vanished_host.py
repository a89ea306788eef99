#!/usr/bin/env python3
"""A host of the distributed sort vanishes: its network link is taken down mid-job.

Every process of a 4-node job (and its monitor) runs on a "host" of its own: a network
namespace with its own hostname, joined to the others by a veth pair into a bridge. The ranks
meet through `msgrun --serve` (with a job key file) and use libfabric's tcp provider. Node 1
holds at the start of the PHASE given on the command line (SORTAPP_TEST_HOLD: it writes its
pid to a file and waits), the test takes node 1's link down, then lets it go on. Asserts:
every process exits non-zero within the bound, the monitor names node 1, the isolated node
names the monitor, nothing but the inputs is left, the inputs are byte-identical.
usage: vanished_host.py [PHASE]  (default "phase 3b"; also "phase 1")
Exit 77 (meson's skip) where network namespaces cannot be made (not root).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SLOW, check, failures, sha  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
MSGRUN = os.environ["VIADUCT_MSGRUN"]
NODES = 4
STALL_S = 5
BOUND_S = (STALL_S * 3 + 30) * SLOW


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def main():
    phase = sys.argv[1] if len(sys.argv) > 1 else "phase 3b"
    tag = f"vh{os.getpid() % 100000}"
    sw = f"{tag}-sw"
    if shutil.which("ip") is None or ip("netns", "add", sw).returncode != 0:
        print("cannot create network namespaces here (needs root): skipped")
        return 77
    made = [sw]
    d = tempfile.mkdtemp(prefix="viaduct-vanished-")
    procs = []
    try:
        subnet = f"10.{(os.getpid() >> 8) % 200 + 20}.{os.getpid() % 250 + 1}"
        ip("-n", sw, "link", "add", "br0", "type", "bridge")
        ip("-n", sw, "link", "set", "br0", "up")
        ranks = NODES + 1
        for i in range(ranks):
            ns = f"{tag}-h{i}"
            ip("netns", "add", ns)
            made.append(ns)
            for cmd in (["link", "add", f"{tag}h{i}a", "netns", ns, "type", "veth", "peer", "name",
                         f"{tag}h{i}b", "netns", sw],
                        ["-n", ns, "link", "set", f"{tag}h{i}a", "name", "eth0"],
                        ["-n", ns, "addr", "add", f"{subnet}.{i + 1}/24", "dev", "eth0"],
                        ["-n", ns, "link", "set", "eth0", "up"],
                        ["-n", ns, "link", "set", "lo", "up"],
                        ["-n", sw, "link", "set", f"{tag}h{i}b", "master", "br0"],
                        ["-n", sw, "link", "set", f"{tag}h{i}b", "up"]):
                r = ip(*cmd)
                if r.returncode != 0:
                    print("FAILED: ip", *cmd, r.stderr)
                    return 1
        for k in range(NODES):
            subprocess.run([SORTGEN, "--seed", str(k + 7), "--first", str(k * 30000), "30000",
                            f"{d}/in.{k}"], check=True, capture_output=True)
        before = [sha(f"{d}/in.{k}") for k in range(NODES)]
        # The coordinator lives on the monitor's host, which stays up.
        coord = f"{subnet}.{ranks}:{20000 + os.getpid() % 20000}"
        keyfile = f"{d}/key"
        serve = subprocess.Popen(["ip", "netns", "exec", f"{tag}-h{ranks - 1}", MSGRUN, "-n",
                                  str(ranks), "--serve", coord, "--key-file", keyfile],
                                 stdout=subprocess.DEVNULL, stderr=open(f"{d}/coordinator", "w"))
        deadline = time.monotonic() + 60 * SLOW
        while not os.path.exists(keyfile) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not check(os.path.exists(keyfile), "the coordinator wrote no key file"):
            return 1
        held = f"{d}/held"
        env = dict(os.environ, VIADUCT_COORDINATOR=coord, VIADUCT_SIZE=str(ranks),
                   VIADUCT_JOB_KEY_FILE=keyfile, SORTAPP_TEST_HOLD=f"node 1|{phase}|{held}")
        for i in range(ranks):
            e = dict(env, VIADUCT_RANK=str(i))
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", f"{tag}-h{i}", "unshare", "--uts", "sh", "-c",
                 'hostname "$0" && exec "$@"', f"host{i}", SORTAPP, "job", "--input",
                 f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}", "--stall-timeout",
                 str(STALL_S * SLOW), "--job-id", "vanished", "--network-mb-s", "100",
                 "--memory", "64M"],
                env=e, stdout=subprocess.DEVNULL, stderr=open(f"{d}/rank{i}", "w")))
        while not os.path.exists(held) and time.monotonic() < deadline:
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.01)
        if not check(os.path.exists(held), f"node 1 never reached {phase}"):
            return 1
        ip("-n", f"{tag}-h1", "link", "set", "eth0", "down")
        t0 = time.monotonic()
        os.remove(held)
        codes = []
        for i, p in enumerate(procs):
            try:
                codes.append(p.wait(timeout=max(1, BOUND_S - (time.monotonic() - t0))))
            except subprocess.TimeoutExpired:
                codes.append(None)
        elapsed = time.monotonic() - t0
        text = {i: open(f"{d}/rank{i}", errors="backslashreplace").read() for i in range(ranks)}
        print(f"vanished host ({phase}): exit statuses {codes}, all ended {elapsed:.1f} s after "
              f"the link went down (bound {BOUND_S} s)", flush=True)
        check(None not in codes, f"processes still running after {BOUND_S} s: {codes}")
        check(all(c not in (None, 0) for c in codes), f"a process exited 0: {codes}")
        check("node 1" in text[ranks - 1],
              f"the monitor does not name node 1: {text[ranks - 1][-800:]!r}")
        check("or its link stopped answering" in text[ranks - 1] and "exited or was killed"
              not in text[ranks - 1], f"the monitor does not say node 1's host or link stopped "
              f"answering: {text[ranks - 1][-800:]!r}")
        check("monitor" in text[1], f"the isolated node does not name the monitor: "
              f"{text[1][-800:]!r}")
        left = sorted(n for n in os.listdir(d) if not n.startswith("in.") and
                      n not in ("key", "coordinator") and not n.startswith("rank"))
        check(not left, f"files left: {left}")
        check([sha(f"{d}/in.{k}") for k in range(NODES)] == before, "an input changed")
        if failures:
            for i in range(ranks):
                print(f"--- rank {i}:\n{text[i][-1500:]}")
        serve.terminate()
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        subprocess.run(["pkill", "-KILL", "-f", d], capture_output=True)
        for ns in made:
            ip("netns", "del", ns)
        shutil.rmtree(d, ignore_errors=True)
    print("vanished_host:", "FAILED" if failures else "ok", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
