#!/usr/bin/env python3
"""The timeline page in a real browser: Debian's headless Chromium opens timeline.html from disk.
- make_timeline writes a 4-node job, node 1's host name hostile ('</script><b>...').
- --dump-dom of timeline.html#t=20: the page says it is drawn (<body data-ready="1">) with no
  script error (data-errors="0"), has exactly 4 lanes and 4 replay bar groups, the replay at
  20 s (phase 3b, the needle's node its busiest CPU), shows the needle line, and the hostile
  host as text, never as markup.
- --screenshot at 1280x900: a PNG (decoded here with zlib and struct) that is not blank.
Fails, naming scripts/setup.sh, when chromium is not installed.
usage: chromium_test.py MAKE_TIMELINE [--keep DIR]   (--keep: leave the page and screenshot there)
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, counts, failures  # noqa: E402

TIMEOUT = 120  # seconds for each browser run
HOSTILE = "evil</script><b>bold</b>\"q'&amp;"
NEEDLE = "needle: node 2, phase 3b, 1.41x the median"


def chromium_or_fail():
    path = shutil.which("chromium")
    if path is None:
        print("FAIL: chromium is not installed; scripts/setup.sh installs it (Debian package "
              "chromium), which this test needs to open the timeline page", flush=True)
        sys.exit(1)
    return path


def run_chromium(chromium, scratch, *args):
    """Runs headless Chromium with its own profile under `scratch`; its stdout. The browser and
    its helpers are one process group, killed whole on a timeout."""
    profile = os.path.join(scratch, "profile")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(scratch, "config"),
               XDG_CACHE_HOME=os.path.join(scratch, "cache"))
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + profile, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        check(False, f"chromium did not finish in {TIMEOUT} s: {' '.join(cmd)}")
        return ""
    if proc.returncode != 0:
        tail = err.decode(errors="replace")[-2000:]
        check(False, f"chromium exited {proc.returncode}: {' '.join(cmd)}\n{tail}")
    return out.decode(errors="replace")


def png_pixels(path):
    """(width, height, rows of pixel tuples' bytes) of an 8-bit, non-interlaced PNG."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour_type not in (0, 2, 4, 6):
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, type {colour_type})")
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour_type]
    return width, height, unfiltered(zlib.decompress(idat), width * bpp, height, bpp)


def unfiltered(raw, stride, height, bpp):
    """The PNG's scanlines with their filters (None, Sub, Up, Average, Paeth) undone."""
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        if kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind in (1, 3, 4):
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
                if kind == 1:
                    add = left
                elif kind == 3:
                    add = (left + up) // 2
                else:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    add = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + add) & 0xFF
        rows.append(line)
        prev = line
    return rows


def check_dom(dom, nodes):
    body = re.search(r"<body[^>]*>", dom)
    body = body.group(0) if body else ""
    check('data-ready="1"' in body, f"the page never said it was drawn: {body!r}")
    check('data-errors="0"' in body, f"the page recorded script errors: {body!r} "
          f"{re.findall(r'id=.errors.[^>]*>([^<]*)', dom)}")
    lanes = re.findall(r'data-lane="(\d+)"', dom)
    check(sorted(lanes) == [str(n) for n in range(nodes)],
          f"lanes {lanes}, expected one for each of {nodes} nodes")
    bars = re.findall(r'data-bar="(\d+)"', dom)
    check(len(bars) == nodes, f"{len(bars)} replay bar groups, expected {nodes}")
    check(dom.count("<polygon") >= 4 * nodes, "the lanes have no stacked CPU areas")
    check(re.search(r'id="clock"[^>]*>20\.00 s of ', dom) is not None, "the replay is not at #t=20")
    busiest = {}
    for node, row in re.findall(r'data-bar="(\d+)"(.*?)(?=data-bar=|</section>)', dom, re.S):
        check("phase 3b" in row, f"node {node}'s replay bars are not in phase 3b at 20 s")
        cpu = re.search(r'class="meter-value"[^>]*>(\d+) %', row)
        busiest[int(node)] = int(cpu.group(1)) if cpu else -1
    check(busiest and max(busiest, key=busiest.get) == 2,
          f"node 2 (the needle: others take its CPUs) is not the busiest at 20 s: {busiest}")
    check(NEEDLE in dom, "the needle line is not on the page")
    check(re.search(r'class="lane[^"]*needle', dom) is not None, "the needle's lane is not marked")
    # The hostile host appears as text (escaped), and nowhere outside an attribute's value as
    # markup: no <b> element from it, no early end of a script.
    text_form = "evil&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;\"q'&amp;amp;"
    check(text_form in dom, "the hostile host name is not shown as text")
    outside_attributes = re.sub(r'="[^"]*"', '=""', dom)
    check("<b>bold" not in outside_attributes, "the hostile host name became markup")
    check("</script><b>" not in outside_attributes, "the hostile host name ended a script")


def check_screenshot(path):
    if not check(os.path.exists(path), "chromium wrote no screenshot"):
        return
    width, height, rows = png_pixels(path)
    check((width, height) == (1280, 900), f"screenshot is {width}x{height}, not 1280x900")
    seen = {}
    for line in rows[::3]:
        for i in range(0, len(line), 4 * 3):  # every fourth pixel of every third row (RGBA)
            px = bytes(line[i:i + 3])
            seen[px] = seen.get(px, 0) + 1
    commonest = max(seen.values()) / sum(seen.values())
    print(f"screenshot: {len(seen)} distinct colours, the commonest {commonest:.0%} of pixels")
    check(len(seen) >= 16, f"screenshot has only {len(seen)} distinct colours: blank?")
    check(commonest < 0.97, f"one colour covers {commonest:.0%} of the screenshot: blank?")


def main():
    make_timeline = sys.argv[1]
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    chromium = chromium_or_fail()
    with tempfile.TemporaryDirectory(prefix="timeline-chromium-") as scratch:
        out = os.path.join(keep or scratch, "timeline")
        made = subprocess.run([make_timeline, out, "4", HOSTILE], capture_output=True,
                              text=True, timeout=120)
        if not check(made.returncode == 0, f"make_timeline failed: {made.stderr}"):
            sys.exit(1)
        page = Path(out, "timeline.html").resolve().as_uri()
        dom = run_chromium(chromium, scratch, "--dump-dom", page + "#t=20")
        if keep:
            Path(keep, "dom.html").write_text(dom)
        check_dom(dom, 4)
        shot = os.path.join(keep or scratch, "screenshot.png")
        run_chromium(chromium, scratch, "--screenshot=" + shot, "--window-size=1280,900", page)
        check_screenshot(shot)
    print(f"{counts['checks'] - len(failures)} of {counts['checks']} checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
