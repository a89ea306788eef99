#!/usr/bin/env python3
"""sansim --plot: the data and gnuplot script beside each PNG say what the plot shows.
- RTT histogram: a density, count / bucket width, the widths the log-linear buckets have.
- Link utilization: every link direction named, grouped by fabric (X, Y) and kind.
- Figure 5 sweep: lines with points, a log2 node axis for powers of two, the paper's points.
- Without gnuplot the run fails, names it and leaves no PNG.
- Runs with nothing on an axis (no exhaustion, one load, no packets) draw without warnings.
Exit 77 (skipped) when gnuplot is not installed.
usage: plot_test.py SANSIM PAPER_FIGURE5_CSV"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sansim, paper_src = sys.argv[1], sys.argv[2]
if shutil.which("gnuplot") is None:
    print("SKIP: gnuplot is not installed (Debian: gnuplot-nox); the plots cannot be drawn")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, counts, failures  # noqa: E402


def run(*args, env=None):
    return subprocess.run([sansim, *args], capture_output=True, text=True, timeout=120, env=env)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def text(path):
    with open(path) as f:
        return f.read()


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def check_rtt(d, summary):
    hist = rows(os.path.join(d, "rtt_histogram.csv"))
    check(len(hist) > 10, f"rtt_histogram.csv has buckets ({len(hist)})")
    widths = set()
    for h in hist:
        lower_ps = round(float(h["rtt_us"]) * 1e6)
        width_ps = round(float(h["width_us"]) * 1e6)
        count, density = int(h["count"]), float(h["density_per_us"])
        # The log-linear histogram: 64 buckets per power of two picoseconds.
        expect_ps = 1 if lower_ps < 64 else 2 ** (lower_ps.bit_length() - 1) // 64
        check(width_ps == expect_ps, f"bucket at {lower_ps} ps is {width_ps} ps wide, "
              f"not {expect_ps}")
        check(math.isclose(density, count / float(h["width_us"]), rel_tol=1e-9),
              f"density {density} at {h['rtt_us']} us is count / width")
        widths.add(width_ps)
    check(len(widths) >= 3, f"the buckets span several widths ({sorted(widths)})")
    check(sum(int(h["count"]) for h in hist) == summary["packet_rtt"]["count"],
          "the histogram holds every packet")
    gp = text(os.path.join(d, "rtt_histogram.gp"))
    check("'rtt_histogram.csv'" in gp and ":4:" in gp, "rtt_histogram.gp plots column 4, "
          "the density")
    check("count / bucket width" in gp, "the RTT plot's axis says it is a density")


def check_links(d, fabrics, named):
    by_index = {int(r["index"]): r for r in rows(os.path.join(d, "links.csv"))}
    plot = rows(os.path.join(d, "link_utilization.csv"))
    check(len(plot) == len(by_index) > 0, "link_utilization.csv has every link direction")
    order = []
    last_pos = -1
    for p in plot:
        link = by_index[int(p["index"])]
        check("->" in p["name"] and p["name"] == link["name"], f"link {p['index']} is named "
              f"({p['name']!r})")
        check(math.isclose(float(p["utilization"]), float(link["utilization"])),
              f"{p['name']}'s utilization is its links.csv figure")
        frm, to = link["from"].split("."), link["to"].split(".")
        if p["kind"] == "node->switch":  # a node's port p is fabric p in every generator
            check(p["fabric"] == "XY"[int(frm[1])], f"{p['name']} is on fabric {p['fabric']}")
            check(p["name"] == f"{frm[0]}->{to[0]}.p{to[1]}", f"{p['name']} names router "
                  "and port")
        key = (p["fabric"], p["kind"])
        pos = int(p["position"])
        check(pos == last_pos + (1 if order and order[-1] == key else 3 if order else 1),
              f"{p['name']} at {pos}: one step within a group, a gap between groups")
        last_pos = pos
        if not order or order[-1] != key:
            order.append(key)
    check(len(order) == len(set(order)), f"each fabric and kind is one run of links ({order})")
    check(sorted({f for f, _ in order}) == fabrics, f"fabrics {fabrics} ({order})")
    check([f for f, _ in order] == sorted(f for f, _ in order), "fabric X before Y")
    kinds = ["node->switch", "switch->switch", "switch->node"]
    for f in fabrics:
        got = [k for g, k in order if g == f]
        check(got == [k for k in kinds if k in got] and "node->switch" in got
              and "switch->node" in got, f"fabric {f}'s kinds in flow order ({got})")
    gp = text(os.path.join(d, "link_utilization.gp"))
    check("'link_utilization.csv'" in gp, "link_utilization.gp plots link_utilization.csv")
    for f, k in order:
        label = f"{f} {k}" if len(fabrics) > 1 else k
        check(f"title '{label} (" in gp, f"the key names group '{label}'")
        if not named:
            check(f"'{label}' " in gp.split("set xtics (")[1].split(")")[0],
                  f"a tick label names group '{label}'")
    check((":xtic(2)" in gp) == named, "links are tick labels exactly when they fit")
    if len(fabrics) > 1:
        check("lw 2 lc rgb 'black'" in gp, "a rule marks where fabric Y begins")


def check_run_plots():
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "dual:16", "--workload", "phase3b", "--time-limit-us", "2000",
                "--json", "--plot", d)
        check(r.returncode == 0, f"dual:16 phase3b --plot runs ({r.returncode}: {r.stderr})")
        summary = json.loads(r.stdout)  # gnuplot's chatter kept off stdout
        for name in ("rtt_histogram", "link_utilization", "or_series"):
            check(is_png(os.path.join(d, name + ".png")), f"{name}.png is drawn")
        check_rtt(d, summary)
        check_links(d, ["X", "Y"], named=False)
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--plot", d)
        check(r.returncode == 0, f"crossbar:4 --plot runs ({r.stderr})")
        check_links(d, ["X"], named=True)


def check_sweep(d, counts, both, paper):
    sweep = rows(os.path.join(d, "sweep.csv"))
    wide = rows(os.path.join(d, "throughput_vs_nodes.csv"))
    check([int(w["nodes"]) for w in wide] == counts, f"one row per node count {counts}")
    for s in sweep:
        w = next(w for w in wide if w["nodes"] == s["nodes"])
        check(math.isclose(float(w[s["protocol"] + "_mbps"]), float(s["bidir_mbps"]),
                           rel_tol=1e-5), f"{s['nodes']} nodes {s['protocol']}: as in sweep.csv")
    gp = text(os.path.join(d, "throughput_vs_nodes.gp"))
    curves = [line for line in gp.splitlines() if "'throughput_vs_nodes.csv'" in line]
    check(len(curves) == (2 if both else 1) and all("with linespoints" in c for c in curves),
          f"each protocol is a line with points ({curves})")
    check("1/0" not in gp, "no filtered-out points to break the lines")
    pow2 = all(n & (n - 1) == 0 for n in counts)
    check(("set logscale x 2" in gp) == pow2, f"log2 node axis exactly for powers of two {counts}")
    check(("'paper_figure5.csv'" in gp) == paper, "the paper's points are plotted for alltoall")
    check(is_png(os.path.join(d, "throughput_vs_nodes.png")), "throughput_vs_nodes.png is drawn")
    if paper:
        check(text(os.path.join(d, "paper_figure5.csv")) == text(paper_src),
              "paper_figure5.csv is the source tree's data file")


def check_sweeps():
    pts = rows(paper_src)
    check([(p["nodes"], p["unrestricted_mbps"], p["restricted_mbps"]) for p in pts]
          == [("64", "8", "9")], "the paper's stated values: 8 and 9 MB/s/node (section 5.2.2.2)")
    check("Figure 5" in text(paper_src) and "5.2.2.2" in text(paper_src),
          "the data file names its source")
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "dual:16", "--sweep-nodes", "2,4,8", "--protocol", "both",
                "--message-bytes", "4096", "--plot", d)
        check(r.returncode == 0, f"the Figure 5 sweep runs ({r.stderr})")
        check_sweep(d, [2, 4, 8], both=True, paper=True)
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "dual:16", "--sweep-nodes", "3,6", "--message-bytes", "4096",
                "--plot", d)
        check(r.returncode == 0, f"a sweep of 3 and 6 nodes runs ({r.stderr})")
        check_sweep(d, [3, 6], both=False, paper=True)
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "dual:16", "--workload", "permutation", "--sweep-nodes", "2,4",
                "--message-bytes", "4096", "--plot", d)
        check(r.returncode == 0, f"a permutation sweep runs ({r.stderr})")
        check_sweep(d, [2, 4], both=False, paper=False)
    with tempfile.TemporaryDirectory() as d:
        r = run("--topology", "crossbar:8", "--sweep-load", "0.2,0.5", "--self", "--acks", "none",
                "--pci-mbps", "0", "--plot", d)
        check(r.returncode == 0 and is_png(os.path.join(d, "latency_vs_load.png"))
              and "'load_sweep.csv'" in text(os.path.join(d, "latency_vs_load.gp")),
              f"the load sweep's plot is drawn from load_sweep.csv ({r.stderr})")


def check_no_gnuplot():
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PATH=os.path.join(d, "empty"))
        r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--plot", d, env=env)
        check(r.returncode == 2 and "gnuplot not found" in r.stderr,
              f"without gnuplot the run fails and says so ({r.returncode}: {r.stderr})")
        left = [f for f in os.listdir(d) if f.endswith(".png") or f.endswith(".tmp")]
        check(not left, f"no PNG or temporary is left behind ({left})")
        check(os.path.exists(os.path.join(d, "rtt_histogram.csv")), "the data is still written")


def check_quiet():
    """Plots of runs with nothing to show on an axis draw without gnuplot warnings on stderr."""
    with tempfile.TemporaryDirectory() as d:
        empty = os.path.join(d, "empty.trace")
        with open(empty, "w") as f:
            f.write("# nothing to send\n")
        for what, args in [
                ("a run whose NICs never ran out of requests",
                 ["--topology", "crossbar:8", "--workload", "openloop", "--acks", "none",
                  "--pci-mbps", "0"]),
                ("a load sweep of one load",
                 ["--topology", "crossbar:8", "--sweep-load", "0.1", "--acks", "none",
                  "--pci-mbps", "0"]),
                ("a run of an empty trace",
                 ["--topology", "crossbar:4", "--workload", "trace", "--trace", empty])]:
            out = os.path.join(d, str(len(os.listdir(d))))
            r = run(*args, "--plot", out)
            check(r.returncode == 0 and r.stderr == "",
                  f"{what}: plotted without warnings ({r.returncode}: {r.stderr.strip()})")


check_run_plots()
check_sweeps()
check_no_gnuplot()
check_quiet()
print(f"{counts['checks'] - len(failures)} of {counts['checks']} plot checks passed")
sys.exit(1 if failures else 0)
