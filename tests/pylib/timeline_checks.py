"""Checks shared by the tests of a one-process timeline (`sortapp local --timeline`, the
datapump's): the four files, the JSON lines of the one node, --sample-hz's usage errors and a
directory refused before the work. Each records its failures through viaduct_checks.check."""
import json
import os

from viaduct_checks import check, slurp

FILES = ["timeline.jsonl", "timeline.csv", "timeline.png", "timeline.html"]


def check_files(what, tl):
    """The four files and nothing else; the CSV's header, the PNG's signature, the page."""
    for name in FILES:
        check(os.path.isfile(f"{tl}/{name}"), f"{what}: no {name}")
    check(slurp(f"{tl}/timeline.csv").startswith("node,host,t,phase,"),
          f"{what}: the CSV's header is {slurp(f'{tl}/timeline.csv')[:40]!r}")
    if os.path.isfile(f"{tl}/timeline.png"):
        with open(f"{tl}/timeline.png", "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{what}: timeline.png is not a PNG")
    check("<html" in slurp(f"{tl}/timeline.html").lower(), f"{what}: timeline.html is no page")
    check(sorted(os.listdir(tl)) == sorted(FILES), f"{what}: left {sorted(os.listdir(tl))}")


def check_rows(what, path, node, phases, first, last, done="records"):
    """The JSON lines of one node: at least 2, all of `node`, with a host, t and `done`
    nondecreasing, phases among `phases`, the first sample in `first`, the last in `last`.
    Returns the rows."""
    rows = [json.loads(line) for line in slurp(path).splitlines() if line.strip()]
    check(len(rows) >= 2, f"{what}: {len(rows)} samples, not at least 2")
    if not rows:
        return rows
    check(all(r["node"] == node for r in rows), f"{what}: a sample not of node {node}")
    check(all(r["host"] for r in rows), f"{what}: a sample without a host name")
    for field in ("t", done):
        seq = [r[field] for r in rows]
        check(seq == sorted(seq), f"{what}: {field} goes backwards: {seq}")
    names = {r["phase"] for r in rows}
    check(names <= phases, f"{what}: phases {sorted(names - phases)} are not the program's")
    check(rows[0]["phase"] == first, f"{what}: first sample in {rows[0]['phase']!r}")
    check(rows[-1]["phase"] == last, f"{what}: last sample in {rows[-1]['phase']!r}")
    return rows


def bad_rates(run, d, out):
    """--sample-hz 0, abc and 1000, and --sample-hz without --timeline: `run(extra_args)` exits
    2 with one line naming the option, and neither `out` nor a timeline directory appears."""
    for args in (["--timeline", f"{d}/tl-bad", "--sample-hz", "0"],
                 ["--timeline", f"{d}/tl-bad", "--sample-hz", "abc"],
                 ["--timeline", f"{d}/tl-bad", "--sample-hz=1000"],
                 ["--sample-hz", "5"]):
        r = run(args)
        check(r.returncode == 2, f"{args}: exit {r.returncode}, not 2")
        check("--sample-hz" in r.stderr and r.stderr.count("\n") == 1,
              f"{args}: the one line does not name the option: {r.stderr!r}")
        check(not os.path.exists(out), f"{args}: an output was written")
        check(not os.path.exists(f"{d}/tl-bad"), f"{args}: a timeline directory was made")


def world_writable(d):
    """A directory in d that every user may write, without the sticky bit."""
    ww = f"{d}/world"
    os.mkdir(ww)
    os.chmod(ww, 0o777)  # every user may rename what is in it: no sticky bit
    return ww
