#!/usr/bin/env python3
"""What sortapp and sortgen create, and how: never through another user's links, under the
umask, durable when they say done, and never from an input that changed under them.

1. Links planted by another user, and directories others may change. In a private mount namespace with its own /tmp and home, a
   user (nobody) makes /tmp/.cache/viaduct and plants symbolic links where the disk cache, its
   lock and its temporary would go, pointing at root's files. A root-run `sortapp local
   --remeasure` with HOME unset (env -i, as cron and systemd run it), then with
   XDG_CACHE_HOME pointing into that directory, must neither change nor create a root file,
   and must say why it does not use that directory. An output directory every user may write
   (not sticky), or that another user owns, is refused.
2. The umask: under umask 077 the output of a 0600 input, and its temporary while the sort
   runs, are 0600; under 022, 0644.
3. Durability: after the rename that publishes the output (sortapp local, sortgen), the
   directory is fsynced (strace shows the fsync of the directory after the rename).
4. An input that grows or is overwritten while it is sorted: a named error, exit non-zero, and
   no output.
5. Free space: a sparse input far larger than the disk's free space is refused before any work,
   with the figures, and nothing is left.
Binaries from SORTAPP_BIN, SORTGEN_BIN, SORTCHECK_BIN.
"""
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, failures  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]
ROOT_HOME = pwd.getpwuid(0).pw_dir  # where a root-run sort with HOME unset keeps its cache
skipped = []


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=300, **kw)


def gen(path, records):
    r = run([SORTGEN, "--quiet", str(records), path])
    assert r.returncode == 0, r.stderr


# The attack, run as root inside `unshare --mount`: /tmp/.cache and root's ~/.cache (HOME's
# fallback) are fresh file systems private to the namespace, the first owned by nobody, who
# plants the links; nothing else is hidden (the binaries may live anywhere, /tmp included).
# sortapp runs with its pid known (exec), so the temporary name of the old code,
# "<cache>.tmp.<pid>", is planted too.
ATTACK = r"""
set -eu
mount --make-rprivate /
mount -t tmpfs -o uid=65534,gid=65534,mode=0755 tmpfs /tmp/.cache
mount -t tmpfs -o mode=0700 tmpfs "$ROOT_HOME/.cache"
plant() {
  setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
    mkdir -p /tmp/.cache/viaduct && cd /tmp/.cache/viaduct &&
    ln -s "$1/victim" sortapp-disk.json.tmp.$2 &&
    ln -s "$1/created" sortapp-disk.json.lock &&
    ln -s "$1/victim2" sortapp-disk.json' sh "$WORK" "$1"
}
( plant $BASHPID && exec env -i PATH=/usr/bin:/bin $XDG "$SORTAPP" local --remeasure \
    --probe-size 4M --no-direct --no-progress "$WORK/in" "$WORK/out" ) >"$WORK/log" 2>&1 || {
  echo "sortapp exited $?"; cat "$WORK/log"; exit 1; }
cat "$WORK/log"
echo "--- tmp cache:"; ls -la /tmp/.cache/viaduct
echo "--- home cache:"; ls "$ROOT_HOME/.cache/viaduct" 2>&1 || true
"""


def mount_points():
    """/tmp/.cache and /root/.cache must exist to be mounted on; those this test makes (empty)
    are removed afterwards."""
    made = []
    for d in ("/tmp/.cache", ROOT_HOME + "/.cache"):
        if not os.path.isdir(d):
            os.makedirs(d, mode=0o700)
            made.append(d)
    return made


def can_attack():
    if os.geteuid() != 0:
        return "not root"
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    r = run(["unshare", "--mount", "true"])
    if r.returncode != 0:
        return "no mount namespaces here: " + r.stderr.strip()
    return None


def planted_links():
    why = can_attack()
    if why:
        skipped.append(f"planted links ({why})")
        return
    made = mount_points()
    try:
        for xdg in ("", "XDG_CACHE_HOME=/tmp/.cache"):
            attack_once(xdg)
    finally:
        for d in made:
            os.rmdir(d)


def attack_once(xdg):
    work = tempfile.mkdtemp(prefix="viaduct-safety-", dir="/var/tmp")
    try:
        os.chmod(work, 0o755)
        gen(f"{work}/in", 20000)
        for name in ("victim", "victim2"):
            with open(f"{work}/{name}", "w") as f:
                f.write("root's own file\n")
        env = dict(os.environ, WORK=work, SORTAPP=SORTAPP, XDG=xdg, ROOT_HOME=ROOT_HOME)
        r = run(["unshare", "--mount", "bash", "-c", ATTACK], env=env)
        label = xdg or "HOME unset"
        check(r.returncode == 0, f"{label}: attack run failed: {r.stdout[-800:]} {r.stderr}")
        for name in ("victim", "victim2"):
            check(open(f"{work}/{name}").read() == "root's own file\n",
                  f"{label}: {name} was overwritten through a planted link")
        check(not os.path.exists(f"{work}/created"),
              f"{label}: a file was created through the planted lock link")
        check(os.path.exists(f"{work}/out"), f"{label}: no output: {r.stdout[-600:]}")
        if xdg:
            check("owned by another user" in r.stdout,
                  f"{label}: the refusal is not named: {r.stdout[-600:]}")
        else:
            # With HOME unset the cache goes to the user's home from the password database.
            check("sortapp-disk.json" in r.stdout.split("--- home cache:")[-1],
                  f"{label}: the cache did not go to root's home: {r.stdout[-600:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def unsafe_directories():
    """An output directory every user may write without the sticky bit, or one another user
    owns: someone else could swap the file between its writing and its rename. Refused,
    naming the directory, with nothing written there."""
    d = tempfile.mkdtemp(prefix="viaduct-dirs-")
    try:
        gen(f"{d}/in", 2000)
        os.mkdir(f"{d}/open")
        os.chmod(f"{d}/open", 0o777)
        cases = [("open", "writable by every user and not sticky")]
        if os.geteuid() == 0:
            os.mkdir(f"{d}/theirs")
            os.chown(f"{d}/theirs", 65534, 65534)
            cases.append(("theirs", "owned by another user"))
        else:
            skipped.append("a directory another user owns (not root)")
        for sub, message in cases:
            r = run([SORTAPP, "local", "--no-measure", "--no-progress", f"{d}/in",
                     f"{d}/{sub}/out"])
            check(r.returncode != 0 and message in r.stderr and f"{d}/{sub}" in r.stderr,
                  f"{sub}: exit {r.returncode}, {r.stderr[-300:]!r}")
            check(os.listdir(f"{d}/{sub}") == [], f"{sub}: left {os.listdir(f'{d}/{sub}')}")
        os.chmod(f"{d}/open", 0o1777)  # sticky, as /tmp: others cannot touch this user's files
        r = run([SORTAPP, "local", "--no-measure", "--no-progress", f"{d}/in", f"{d}/open/out"])
        check(r.returncode == 0, f"a sticky directory: exit {r.returncode}, {r.stderr[-300:]!r}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def held_sort(d, phase, input_path, output, umask=None, extra=()):
    """Starts `sortapp local` held at `phase`; returns (process, pid file)."""
    held = f"{d}/held"
    env = dict(os.environ, SORTAPP_TEST_HOLD=f"sortapp local|{phase}|{held}")
    pre = (lambda: os.umask(umask)) if umask is not None else None
    proc = subprocess.Popen([SORTAPP, "local", "--memory", "8M", "--no-measure", "--no-direct",
                             "--no-progress", *extra, input_path, output],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=pre)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not os.path.exists(held):
        time.sleep(0.01)
    return proc, held


def release(proc, held):
    os.remove(held)
    try:
        return proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def umask_modes():
    for umask, want in ((0o077, 0o600), (0o022, 0o644)):
        d = tempfile.mkdtemp(prefix="viaduct-umask-")
        try:
            gen(f"{d}/in", 200000)
            os.chmod(f"{d}/in", 0o600)
            proc, held = held_sort(d, "phase 2", f"{d}/in", f"{d}/out", umask=umask)
            if not os.path.exists(held):
                proc.kill()
                check(False, f"umask {umask:03o}: the sort never reached phase 2")
                continue
            temps = [n for n in os.listdir(d) if n.startswith(".out.sortapp-")]
            check(len(temps) == 1, f"umask {umask:03o}: temporaries {temps}")
            for t in temps:
                mode = stat.S_IMODE(os.stat(f"{d}/{t}").st_mode)
                check(mode == want, f"umask {umask:03o}: the temporary is {mode:04o}, not {want:04o}")
            out, err = release(proc, held)
            check(proc.returncode == 0, f"umask {umask:03o}: exit {proc.returncode}: {err[-300:]}")
            mode = stat.S_IMODE(os.stat(f"{d}/out").st_mode)
            check(mode == want, f"umask {umask:03o}: the output is {mode:04o}, not {want:04o}")
        finally:
            shutil.rmtree(d, ignore_errors=True)


def strace_calls(trace):
    """The calls of an `strace -f` log, one string each ("name(args) = result"), with the
    halves of a call another thread interrupted ("<unfinished ...>", "<... resumed>") joined."""
    pending, calls = {}, []
    for line in open(trace).read().splitlines():
        pid, _, call = line.partition(" ")
        call = call.strip()
        if call.endswith("<unfinished ...>"):
            pending[pid] = call[: -len("<unfinished ...>")].rstrip()
        elif call.startswith("<..."):
            calls.append(pending.pop(pid, "") + call.split("resumed>", 1)[-1])
        else:
            calls.append(call)
    return calls


def directory_synced_after_rename(trace, final):
    """True when the strace log shows an fsync of the final name's directory after the
    rename onto it."""
    calls = strace_calls(trace)
    renamed = [i for i, c in enumerate(calls)
               if c.startswith("rename") and f'"{final}"' in c and c.endswith("= 0")]
    if not renamed:
        return False
    d = os.path.dirname(final)
    dir_fds = set()
    for c in calls[renamed[0]:]:
        if c.startswith("openat(") and f'"{d}"' in c and "O_DIRECTORY" in c:
            dir_fds.add(c.rsplit("= ", 1)[-1].strip())
        if c.startswith("fsync(") and c[6:].split(")")[0] in dir_fds:
            return True
    return False


def durability():
    if shutil.which("strace") is None:
        skipped.append("durability (strace not installed)")
        return
    d = tempfile.mkdtemp(prefix="viaduct-sync-")
    # LeakSanitizer cannot run under ptrace; an AddressSanitizer build checks leaks elsewhere.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    try:
        r = run(["strace", "-f", "-qq", "-o", f"{d}/gen.trace", "-e",
                 "trace=openat,rename,renameat,renameat2,fsync", SORTGEN, "--quiet", "20000",
                 f"{d}/in"], env=env)
        check(r.returncode == 0, f"sortgen under strace: {r.stderr[-300:]}")
        check(directory_synced_after_rename(f"{d}/gen.trace", f"{d}/in"),
              "sortgen: no fsync of the directory after renaming the input into place: " +
              " | ".join(strace_calls(f"{d}/gen.trace")[-12:]))
        r = run(["strace", "-f", "-qq", "-o", f"{d}/sort.trace", "-e",
                 "trace=openat,rename,renameat,renameat2,fsync", SORTAPP, "local",
                 "--no-measure", "--no-direct", "--no-progress", f"{d}/in", f"{d}/out"], env=env)
        check(r.returncode == 0, f"sortapp local under strace: {r.stderr[-300:]}")
        check(directory_synced_after_rename(f"{d}/sort.trace", f"{d}/out"),
              "sortapp local: no fsync of the directory after renaming the output into place: " +
              " | ".join(strace_calls(f"{d}/sort.trace")[-12:]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def changed_input():
    def append(path):
        with open(path, "ab") as f:
            f.write(b"x" * 100)

    def overwrite(path):
        with open(path, "r+b") as f:
            f.write(b"y" * 100)

    for how, change in (("appended", append), ("overwritten", overwrite)):
        d = tempfile.mkdtemp(prefix="viaduct-change-")
        try:
            gen(f"{d}/in", 200000)
            proc, held = held_sort(d, "phase 2", f"{d}/in", f"{d}/out")
            if not os.path.exists(held):
                proc.kill()
                check(False, f"{how}: the sort never reached phase 2")
                continue
            time.sleep(0.01)  # a later mtime on file systems with coarse timestamps
            change(f"{d}/in")
            out, err = release(proc, held)
            check(proc.returncode != 0, f"{how}: exit 0 although the input changed")
            check(f"input {d}/in changed while it was being sorted" in err,
                  f"{how}: message {err[-300:]!r}")
            left = sorted(n for n in os.listdir(d) if n not in ("in",))
            check(left == [], f"{how}: left {left}")
        finally:
            shutil.rmtree(d, ignore_errors=True)


def changed_input_cluster():
    """Node 1's input grows while the job is in phase 3b: the commit names it, the job fails,
    and no node's output is left."""
    d = tempfile.mkdtemp(prefix="viaduct-change-cluster-")
    try:
        r = run([SORTGEN, "--quiet", "--partitions", "2", "40000", f"{d}/in"])
        check(r.returncode == 0, f"sortgen: {r.stderr}")
        held = f"{d}/held"
        env = dict(os.environ, SORTAPP_TEST_HOLD=f"node 1|phase 3b|{held}")
        proc = subprocess.Popen([SORTAPP, "run", "-n", "2", "--input", f"{d}/in.{{rank}}",
                                 "--output", f"{d}/out.{{rank}}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None and not os.path.exists(held):
            time.sleep(0.01)
        if not check(os.path.exists(held), "cluster: node 1 never reached phase 3b"):
            proc.kill()
            proc.communicate()
            return
        time.sleep(0.01)  # a later mtime on file systems with coarse timestamps
        with open(f"{d}/in.1", "ab") as f:
            f.write(b"z" * 100)
        out, err = release(proc, held)
        check(proc.returncode != 0, "cluster: exit 0 although an input changed")
        check(f"input {d}/in.1 changed while it was being sorted" in err,
              f"cluster: message {err[-500:]!r}")
        left = sorted(n for n in os.listdir(d) if not n.startswith("in."))
        check(left == [], f"cluster: left {left}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def free_space():
    d = tempfile.mkdtemp(prefix="viaduct-space-")
    try:
        free = shutil.disk_usage(d).free
        size = (free * 4 // 100 + 1) * 100  # whole records, four times the free space
        with open(f"{d}/in", "wb") as f:
            f.truncate(size)
        r = run([SORTAPP, "local", "--no-measure", "--no-progress", f"{d}/in", f"{d}/out"])
        check(r.returncode != 0, "a sort four times the free space was started")
        check("not enough disk space" in r.stderr and "free" in r.stderr,
              f"message {r.stderr[-300:]!r}")
        check(sorted(os.listdir(d)) == ["in"], f"left {sorted(os.listdir(d))}")
        # Two nodes on one disk, each of whose outputs alone would fit but not both: the
        # monitor sums what the nodes sharing a disk need, and names them.
        os.remove(f"{d}/in")
        each = (free * 6 // 10 // 100) * 100
        for k in range(2):
            with open(f"{d}/in.{k}", "wb") as f:
                f.truncate(each)
        r = run([SORTAPP, "run", "-n", "2", "--algorithm", "river", "--passes", "1",
                 "--input", f"{d}/in.{{rank}}", "--output", f"{d}/out.{{rank}}"])
        check(r.returncode != 0, "a cluster sort larger than the shared disk was started")
        check("not enough disk space" in r.stderr and "node 0's output" in r.stderr and
              "node 1's output" in r.stderr, f"cluster: message {r.stderr[-500:]!r}")
        check(sorted(os.listdir(d)) == ["in.0", "in.1"], f"cluster: left {sorted(os.listdir(d))}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


planted_links()
unsafe_directories()
umask_modes()
durability()
changed_input()
changed_input_cluster()
free_space()
for s in skipped:
    print(f"SKIPPED: {s}")
if failures:
    sys.exit(1)
if skipped:
    sys.exit(77)
print("file safety: all cases passed")
