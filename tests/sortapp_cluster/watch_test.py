#!/usr/bin/env python3
"""The distributed sort's live view (`sortapp run --watch`) and its progress line.

usage: watch_test.py CASE
Cases:
  tty       4 nodes under a pseudo-terminal: a bar line for every node, redrawn in place
            (cursor up over the last frame), and the report after it
  sixteen   16 nodes on an 80x24 pseudo-terminal: no frame wider than 80 columns or taller
            than 24 rows, every node's line in the frames
  plain     --watch without a terminal: plain progress lines (no escape sequences) on
            stderr; with --json, stdout is the one JSON object
  progress  a terminal without --watch: the one progress line, with a MB/s figure
Node 1 is held at the start of phase 1 for a moment (SORTAPP_TEST_HOLD), so that the job lasts
long enough for frames and lines to be due whatever the machine's load; nothing is timed.
Binaries come from SORTAPP_BIN, SORTGEN_BIN and SORTCHECK_BIN. Every sort is validated by
sortcheck. Exit 77 means skipped (meson's code).
"""
import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SLOW, check, failures, run_case  # noqa: E402

SORTAPP = os.environ["SORTAPP_BIN"]
SORTGEN = os.environ["SORTGEN_BIN"]
SORTCHECK = os.environ["SORTCHECK_BIN"]

# A frame is drawn from the cursor, each line cleared to its end (ESC [ K) and ended by "\n",
# then what is below it cleared (ESC [ J) and the cursor moved up to its first line (ESC [ nA)
# (monitor/live_view.cpp).
MOVE_UP = re.compile(rb"\x1b\[(\d+)A")
# A node's line with both bars: "   2 phase 1        45% [uuss oo  ] [rrww o  ]   120    3".
BAR_LINE = re.compile(r"^\s*(\d+) .*\[[usow ]+\] \[[rwo ]+\]\s+\d+\s+\d+$")


def generate(d, nodes, records):
    for k in range(nodes):
        subprocess.run([SORTGEN, "--seed", "9", "--first", str(k * records), str(records),
                        f"{d}/in.{k}"], check=True, capture_output=True)


def validate(d, nodes, what):
    r = subprocess.run([SORTCHECK, "--json", *[f"{d}/out.{k}" for k in range(nodes)]],
                       capture_output=True, text=True)
    got = json.loads(r.stdout)
    want = json.loads(subprocess.run([SORTCHECK, "--json",
                                      *[f"{d}/in.{k}" for k in range(nodes)]],
                                     capture_output=True, text=True).stdout)
    check(got["sorted"] and got["records"] == want["records"] and
          got["checksum"] == want["checksum"], f"{what}: outputs {got}, inputs {want}")


def command(d, nodes, extra):
    return [SORTAPP, "run", "-n", str(nodes), "--input", f"{d}/in.{{rank}}", "--output",
            f"{d}/out.{{rank}}", "--memory", "2M", "--timeout", str(300 * SLOW), *extra]


class Hold:
    """Holds node 1 at the start of phase 1 for `seconds` once it gets there."""

    def __init__(self, d, seconds):
        self.file = f"{d}/held"
        self.seconds = seconds
        self.env = dict(os.environ, SORTAPP_TEST_HOLD=f"node 1|phase 1|{self.file}")
        self.reached = False

    def release_later(self, proc):
        def run():
            while proc.poll() is None and not os.path.exists(self.file):
                time.sleep(0.01)
            if os.path.exists(self.file):
                self.reached = True
                time.sleep(self.seconds)
                os.remove(self.file)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


def run_on_pty(args, env, cols=80, rows=24):
    """Starts args with stdout and stderr on a pseudo-terminal of cols x rows; returns the
    process and the terminal's master side (read_pty reads it)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    return proc, master


def read_pty(proc, master, hold):
    """Everything the process writes on its terminal until it ends, with node 1 held meanwhile."""
    waiter = hold.release_later(proc)
    out = bytearray()
    deadline = time.time() + 400 * SLOW
    while time.time() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every process holding the terminal has gone
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        check(False, "the job did not end")
    waiter.join(timeout=60)
    return bytes(out)


def frames(out):
    """The frames drawn, each as its lines' texts."""
    found = []
    for piece in out.split(b"\x1b[J"):
        rows = [row.replace(b"\r", b"") for row in MOVE_UP.sub(b"", piece).split(b"\n")]
        lines = [row[:-3].decode(errors="replace") for row in rows if row.endswith(b"\x1b[K")]
        if lines:
            found.append(lines)
    return found


def case_tty(d):
    generate(d, 4, 20000)
    hold = Hold(d, 1.5)
    proc, master = run_on_pty(command(d, 4, ["--watch"]), hold.env)
    out = read_pty(proc, master, hold)
    text = out.decode(errors="replace")
    if not check(proc.returncode == 0, f"tty: exit {proc.returncode}: {text[-2000:]!r}"):
        return
    check(hold.reached, "tty: node 1 never reached phase 1")
    got = frames(out)
    nodes = {int(m.group(1)) for f in got for line in f if (m := BAR_LINE.match(line))}
    check(nodes == {0, 1, 2, 3}, f"tty: bar lines for nodes {sorted(nodes)}: {got[-1:]}")
    ups = MOVE_UP.findall(out)
    check(len(ups) >= 2, f"tty: {len(ups)} redraws in place")
    # A blank line, the legend, the titles and 4 nodes.
    check(all(int(n) == 7 for n in ups), f"tty: cursor moved up other than a frame: {ups}")
    check("sortapp: 4 nodes, 80000 records" in text and "partition records:" in text,
          f"tty: no report after the frames: {text[-1500:]!r}")
    # The report follows the last frame, which was taken off the screen first.
    check(text.rfind("\x1b[J") < text.find("sortapp: 4 nodes,"),
          "tty: the report is not below the erased frame")
    validate(d, 4, "tty")
    if got:
        print("tty: last frame:\n" + "\n".join(got[-1]), flush=True)


def case_sixteen(d):
    generate(d, 16, 2000)
    hold = Hold(d, 1.0)
    proc, master = run_on_pty(command(d, 16, ["--watch"]), hold.env, cols=80, rows=24)
    out = read_pty(proc, master, hold)
    if not check(proc.returncode == 0,
                 f"sixteen: exit {proc.returncode}: {out[-2000:].decode(errors='replace')!r}"):
        return
    got = frames(out)
    check(got, "sixteen: no frame drawn")
    wide = [line for f in got for line in f if len(line) > 80]
    check(not wide, f"sixteen: lines wider than 80 columns: {wide[:3]}")
    tall = [len(f) for f in got if len(f) > 24]
    check(not tall, f"sixteen: frames taller than 24 rows: {tall[:3]}")
    nodes = {int(m.group(1)) for f in got for line in f if (m := BAR_LINE.match(line))}
    check(nodes == set(range(16)), f"sixteen: bar lines for nodes {sorted(nodes)}")
    if got:
        print("sixteen: a frame on 80x24:\n" + "\n".join(got[len(got) // 2]), flush=True)
    # A terminal too short for every node: the last lines are summed up, nothing scrolls.
    hold = Hold(d, 0.5)
    proc, master = run_on_pty(command(d, 16, ["--watch"]), hold.env, cols=60, rows=10)
    out = read_pty(proc, master, hold)
    got = frames(out)
    check(proc.returncode == 0 and got, f"sixteen on 60x10: exit {proc.returncode}")
    check(all(len(f) <= 9 and all(len(line) < 60 for line in f) for f in got),
          f"sixteen on 60x10: a frame does not fit: {[f for f in got if len(f) > 9][:1]}")
    check(any(line.startswith("nodes ") for f in got for line in f),
          f"sixteen on 60x10: no line sums up the nodes that do not fit: {got[-1:]}")
    validate(d, 16, "sixteen")
    print(f"sixteen: {len(got)} frames on 60x10", flush=True)


def case_plain(d):
    generate(d, 4, 20000)
    # Held past the first line's time (5 s into the job).
    for extra in ([], ["--json"]):
        hold = Hold(d, 6.0)
        proc = subprocess.Popen(command(d, 4, ["--watch", *extra]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=hold.env)
        waiter = hold.release_later(proc)
        out, err = proc.communicate(timeout=400 * SLOW)
        waiter.join(timeout=60)
        what = f"plain {extra}"
        if not check(proc.returncode == 0, f"{what}: exit {proc.returncode}: {err[-2000:]!r}"):
            continue
        check(hold.reached, f"{what}: node 1 never reached phase 1")
        check(b"\x1b" not in out + err, f"{what}: an escape sequence without a terminal")
        lines = re.findall(rb"^sortapp: \d+ s: n0 .* \| n3 .*$", err, re.M)
        check(lines, f"{what}: no progress line: {err[-1500:]!r}")
        if extra:
            check(len(out.strip().splitlines()) == 1 and json.loads(out)["nodes"] == 4,
                  f"{what}: stdout is not one JSON object: {out[:500]!r}")
        else:
            check(b"sortapp: 4 nodes, 80000 records" in out, f"{what}: no report: {out!r}")
        validate(d, 4, what)
        print(f"{what}: {len(lines)} progress lines, e.g. {lines[0].decode()}" if lines else
              f"{what}: none", flush=True)


def case_progress(d):
    generate(d, 4, 20000)
    hold = Hold(d, 1.5)
    proc, master = run_on_pty(command(d, 4, []), hold.env)
    out = read_pty(proc, master, hold).decode(errors="replace")
    if not check(proc.returncode == 0, f"progress: exit {proc.returncode}: {out[-2000:]!r}"):
        return
    lines = re.findall(r"\r\x1b\[K(n0 [^\r\n\x1b]*)", out)
    check(any("| n3 " in line for line in lines), f"progress: no progress line: {out[:2000]!r}")
    check(any(re.search(r"\d MB/s", line) for line in lines),
          f"progress: no MB/s figure in the lines: {lines[-3:]}")
    check("sortapp: 4 nodes, 80000 records" in out, "progress: no report")
    validate(d, 4, "progress")


def main():
    cases = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}
    return run_case("sortapp-watch", cases)


if __name__ == "__main__":
    sys.exit(main())
