#!/usr/bin/env python3
"""sansim's command line: --help, a --json run whose figures add up, and bad input that fails
with exit status 2 and a message naming the problem (the file and line for a topology file), and
a network that stops delivering, which must end with exit status 3 and say so; output files
that replace a planted symbolic link rather than write through it, and a failed write named.
usage: cli_test.py SANSIM BAD_TOPOLOGY_FILE RING4_TOPOLOGY_FILE"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sansim, bad_topo, ring4 = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []
checks = 0


def run(*args):
    return subprocess.run([sansim, *args], capture_output=True, text=True, timeout=120)


def run_limited(*args, gib=2):
    """With an address-space limit, so a size check that regresses fails here, not the host."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return subprocess.run([sansim, *args], capture_output=True, text=True, timeout=60,
                          preexec_fn=limit)


def expect(cond, what, result):
    global checks
    checks += 1
    if not cond:
        failures.append(f"{what}\n  exit {result.returncode}\n  stdout: {result.stdout[:500]}"
                        f"\n  stderr: {result.stderr[:500]}")


r = run("--help")
expect(r.returncode == 0 and "--topology" in r.stdout, "--help prints the options", r)

r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--json")
try:
    d = json.loads(r.stdout)
    # 4 nodes, all-to-all, 4096 B to each of 3 peers: every byte injected is delivered once.
    expect(r.returncode == 0 and d["complete"] and not d["deadlock"] and d["nodes"] == 4
           and d["payload_injected"] == 4 * 3 * 4096 == d["payload_delivered"]
           and d["duplicate_deliveries"] == 0 and d["sim_time_us"] > 0 and d["events"] > 0,
           "--json run of crossbar:4 accounts for every byte", r)
    # Setup time and memory: the peak covers at least the binary, per node is its share.
    expect(d["setup_s"] >= 0 and d["peak_rss_bytes"] > 1 << 20
           and abs(d["rss_per_node_bytes"] * 4 - d["peak_rss_bytes"]) < 1,
           "--json reports setup time and peak memory per node", r)
except (ValueError, KeyError) as e:
    expect(False, f"--json prints one JSON object with the run's figures ({e})", r)

r = run("--no-such-flag")
expect(r.returncode == 2 and "unknown option --no-such-flag" in r.stderr
       and len(r.stderr.splitlines()) == 1,
       "an unknown option is named", r)
r = run("--topology", "crossbar:4", "--rounds", "zero")
expect(r.returncode == 2 and "--rounds" in r.stderr, "a bad value names its option", r)
r = run("--topology", bad_topo)
expect(r.returncode == 2 and f"{bad_topo}:4:" in r.stderr and "already connected" in r.stderr,
       "a bad topology file is reported at its line", r)
bad_trace = os.path.join(os.path.dirname(os.path.abspath(__file__)), "replay", "truncated.0.csv")
r = run("--topology", "crossbar:2", "--workload", "replay", "--replay", bad_trace)
expect(r.returncode == 2 and f"{bad_trace}:5: expected 9 comma-separated fields" in r.stderr,
       "a malformed trace file is reported at its line", r)
r = run("--topology", "/nonexistent/fabric.topo")
expect(r.returncode == 2 and "/nonexistent/fabric.topo" in r.stderr,
       "a missing topology file is named", r)

r = run("--topology", "file:" + ring4, "--message-bytes", "4096", "--json")
try:
    d = json.loads(r.stdout)
    expect(r.returncode == 0 and d["complete"] and d["nodes"] == 8,
           "--topology file:PATH reads the file", r)
except (ValueError, KeyError) as e:
    expect(False, f"--topology file:PATH runs ({e})", r)
r = run("--topology", ring4, "--routing", "xy")
expect(r.returncode == 2 and "routing 'xy' needs coordinates" in r.stderr
       and f"{ring4}:5:" in r.stderr, "--routing xy on a file without coordinates is refused", r)

# A load sweep of open-loop uniform traffic with self-traffic on an 8-port crossbar without
# acknowledgements: head-of-line blocking saturates it near 62% of the link.
sweep = ["--topology", "crossbar:8", "--sweep-load", "0.2,0.5,0.9", "--self", "--acks", "none",
         "--pci-mbps", "0"]
r = run(*sweep)
expect(r.returncode == 0 and "saturation: accepted falls below 95% of injected between offered "
       "0.500 and 0.900" in r.stdout, "--sweep-load prints the table and the saturation point", r)
r = run(*sweep, "--json")
try:
    d = json.loads(r.stdout)
    expect(r.returncode == 0 and len(d["points"]) == 3 and d["saturation"]["reached"]
           and 0.58 < d["saturation"]["max_accepted"] < 0.66
           and d["points"][0]["run"]["acks"] == "none", "--sweep-load --json", r)
except (ValueError, KeyError) as e:
    expect(False, f"--sweep-load --json prints the sweep ({e})", r)
r = run("--topology", "crossbar:8", "--workload", "openloop", "--acks", "sometimes")
expect(r.returncode == 2 and "--acks" in r.stderr, "a bad --acks value is named", r)
r = run("--topology", "crossbar:8", "--workload", "pingpong", "--sweep-load", "0.1")
expect(r.returncode == 2 and "--sweep-load runs the openloop workload" in r.stderr,
       "--sweep-load with another workload is refused", r)

# Shortest-path routing around a ring deadlocks under phase3b at 20,000 requests/s: the run
# must stop, say so and fail, not average the frozen delivery count down to a throughput.
stall = ["--topology", ring4, "--routing", "shortest", "--workload", "phase3b", "--rate", "20000",
         "--time-limit-us", "80000"]
r = run(*stall)
expect(r.returncode == 3 and "DEADLOCK" in r.stdout and "no packet reached a NIC" in r.stdout,
       "a deadlocked phase3b run exits 3 and says DEADLOCK", r)
r = run(*stall, "--json")
try:
    d = json.loads(r.stdout)
    expect(r.returncode == 3 and d["stalled"] and d["deadlock"] and not d["complete"]
           and d["sim_time_us"] < 80000, "--json of a deadlocked run: stalled, not complete", r)
except (ValueError, KeyError) as e:
    expect(False, f"--json of a deadlocked run prints its figures ({e})", r)
r = run(*stall[:2], *stall[4:])  # default up*/down* routing: deadlock free
expect(r.returncode == 0 and "DEADLOCK" not in r.stdout and "STALLED" not in r.stdout,
       "the same load under up*/down* runs to its time limit", r)

# Today's fabrics: a torus with dimension order, dateline lanes and credits at 100 Gb/s runs
# and reports its flow control; the same load with one lane deadlocks; bad lane, credit and
# generator figures are named. Runs without any of it print no flow-control figures.
fabric = ["--topology", "torus:6,6", "--routing", "xy", "--flow-control", "credit",
          "--vl-buffer-bytes", "128", "--link-gbps", "100", "--hop-latency-ns", "100",
          "--workload", "openloop", "--load", "1", "--acks", "none", "--pci-mbps", "0",
          "--time-limit-us", "1000", "--stall-us", "100"]
r = run(*fabric, "--vls", "2", "--vl-rule", "dateline", "--json")
try:
    d = json.loads(r.stdout)
    fc = d["flow_control"]
    expect(r.returncode == 0 and not d["stalled"] and fc["mode"] == "credit" and fc["vls"] == 2
           and fc["vl_rule"] == "dateline" and fc["buffer_overflows"] == 0
           and fc["peak_buffer_bytes"] == 128 and d["injection_capacity_mbps"] == 10000,
           "credit flow control with dateline lanes at 100 Gb/s runs and reports its figures", r)
except (ValueError, KeyError) as e:
    expect(False, f"--flow-control credit --json prints flow_control ({e})", r)
r = run(*fabric)
expect(r.returncode == 3 and "DEADLOCK" in r.stdout and "flow control credit, 1 virtual lane"
       in r.stdout, "the same torus with one lane deadlocks and says so", r)
r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--json")
expect(r.returncode == 0 and "flow_control" not in json.loads(r.stdout or "{}"),
       "a run that asks for none of it reports no flow control", r)
for args, why in [(["--vls", "0"], "--vls"), (["--credit-bytes", "48"], "power of two"),
                  (["--vl-rule", "diagonal"], "--vl-rule"),
                  (["--topology", "fattree:4,2,3"], "oversubscription 3:1"),
                  (["--topology", "dragonfly:4,2,2,4"], "multiple of g - 1"),
                  (["--topology", "torus:4,4", "--routing", "xy", "--vl-rule", "dateline"],
                   "needs 2 virtual lanes"),
                  (["--topology", "fattree:4,2", "--routing", "valiant"],
                   "routing 'valiant' needs a group")]:
    r = run("--message-bytes", "4096", *args)
    expect(r.returncode == 2 and why in r.stderr, f"{' '.join(args)} is refused naming '{why}'", r)

# Figures that mean little are named in one line with the remedy, by what held the run back.
saturated = "SATURATED: the nodes injected"
for args, remedy in [
        ([], "the NICs' outstanding requests carry at most"
             " 20.45 MB/s each (PCI reads, acknowledgements): switch experiments use --acks none"
             " --pci-mbps 0"),
        (["--acks", "none", "--pci-mbps", "0", "--self"],
         "the accepted load is the saturation throughput; for latencies lower --load")]:
    r = run("--topology", "crossbar:8", "--workload", "openloop", "--load", "0.9", *args)
    lines = [ln for ln in r.stdout.splitlines() if saturated in ln]
    expect(r.returncode == 0 and len(lines) == 1 and remedy in lines[0]
           and "note:" not in r.stdout, f"an overloaded open loop {args} says why and what to do", r)
r = run("--topology", "crossbar:8", "--workload", "openloop", "--load", "0.9", "--json")
expect(r.returncode == 0 and json.loads(r.stdout or "{}").get("verdict", "").startswith(saturated),
       "--json carries the verdict", r)
r = run("--topology", "crossbar:4", "--workload", "phase3b", "--rate", "20000",
        "--time-limit-us", "5000")
expect(r.returncode == 0 and saturated in r.stdout and "lower --rate" in r.stdout
       and "message latency" not in r.stdout, "an overloaded phase3b run: lower --rate", r)
r = run("--topology", "crossbar:8", "--workload", "openloop", "--load", "0.3", "--self",
        "--acks", "none", "--pci-mbps", "0")
expect(r.returncode == 0 and "SATURATED" not in r.stdout and "steady state: yes" in r.stdout
       and "packet RTT: none (writes get no response under --acks none)" in r.stdout,
       "a light open loop is steady and says why it has no packet RTT", r)
r = run("--topology", "crossbar:4", "--message-bytes", "4096")
expect(r.returncode == 0 and "steady state: not checked" in r.stdout
       and "message latency (us)" in r.stdout, "an all-to-all run to its end: no steady check", r)

# Absurd sizes are refused with the figures, before anything is built or simulated. Sanitizer
# runtimes reserve terabytes of address space, so there no address-space limit can be set: the
# refusal is checked against the machine's own memory, and the 1 GiB case is not run (said, not
# counted).
sanitized = os.environ.get("VIADUCT_SANITIZE", "none") != "none"
for topo in ["crossbar:1000000000", "torus:100000,100000"]:
    if sanitized:
        r = run("--topology", topo, "--workload", "pingpong")
        limit_said = "this machine has" in r.stderr or "the cgroup's memory.max is" in r.stderr
    else:
        r = run_limited("--topology", topo, "--workload", "pingpong")
        limit_said = "address-space limit (ulimit) is 2.0 GiB" in r.stderr
    # A crossbar's tables grow with the square of its nodes; a torus's rule with its routers.
    figure = "EiB of memory" if topo.startswith("crossbar") else "TiB of memory"
    expect(r.returncode == 2 and f"topology '{topo}' needs about" in r.stderr
           and figure in r.stderr and limit_said,
           f"{topo} is refused with its memory figure", r)
if sanitized:
    print("a 4,096-node fat tree under a 1 GiB address-space limit: not run in a sanitizer build",
          flush=True)
else:
    r = run_limited("--topology", "fattree:4,6", "--workload", "pingpong", gib=1)
    expect(r.returncode == 0 and "pingpong on fattree:4,6" in r.stdout,
           "a 4,096-node fat tree (about 170 MB) fits in 1 GiB", r)
r = run("--topology", "crossbar:4", "--message-bytes", "1T")
expect(r.returncode == 2 and "alltoall would move 1.32e+13 bytes" in r.stderr
       and "give --time-limit-us" in r.stderr, "1 TiB messages without a time limit are refused", r)
r = run("--topology", "crossbar:4", "--message-bytes", "1T", "--time-limit-us", "100")
expect(r.returncode == 0 and "the time limit ended the run" in r.stdout,
       "1 TiB messages run up to a time limit", r)
for args, why in [(["--time-limit-us", "0"], "--time-limit-us: must be positive"),
                  (["--time-limit-us", "nan"], "'nan' is not a finite number"),
                  (["--warmup", "1e300"], "--warmup: 1e300 is above the limit"),
                  (["--workload", "phase3b", "--rate", "1e300"], "--rate: 1e300 is above"),
                  (["--link-mbps", "1e-300"], "--link-mbps: 1e-300 is below 0.001"),
                  (["--series-bin-us", "1e-9"], "--series-bin-us: at least 0.1")]:
    r = run("--topology", "crossbar:4", *args)
    expect(r.returncode == 2 and why in r.stderr, f"{' '.join(args)} is refused: '{why}'", r)

# Trace records: every field checked, the file and line named.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "t.trace")
    for line, why in [("nan 0 1 64 write", "time_us 'nan' is not a finite number"),
                      ("-1 0 1 64 write", "time_us -1 is negative"),
                      ("1e300 0 1 64 write", "time_us 1e300 is past the limit of 1e12 us"),
                      ("0 0 1 1125899906842624 send", "bytes 1125899906842624 is above the limit"),
                      ("0 0 9 64 write", "dst 9 is above the limit of 3"),
                      ("0 0 1 64 write now", "expected 5 fields"),
                      ("5 1 1 64 read", "src and dst are both node 1"),
                      ("1e11 0 1 64 write", "time_us 1e11 is past the 1000000000 us that 10^7 "
                       "bins of the NICs' time series reach: raise --series-bin-us")]:
        with open(path, "w") as f:
            f.write(f"# a comment\n0 0 1 64 write\n{line}\n")
        r = run("--topology", "crossbar:4", "--workload", "trace", "--trace", path)
        expect(r.returncode == 2 and f"{path}:3: {why}" in r.stderr,
               f"trace line '{line}' is refused at its line: '{why}'", r)
    with open(path, "w") as f:
        f.write("0 0 1 1099511627776 send\n")
    r = run("--topology", "crossbar:4", "--workload", "trace", "--trace", path)
    expect(r.returncode == 2 and "trace would move 1.1e+12 bytes" in r.stderr
           and "--message-bytes" not in r.stderr, "a 1 TiB trace needs a time limit", r)

# Output files: written whole under a fresh name and renamed into place, so a symbolic link
# planted at an output's name is replaced, never written through; modes follow the umask; a
# write that cannot be made is a named error, exit status 2, and leaves nothing behind.
def run_umask(mask, *args):
    return subprocess.run([sansim, *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: os.umask(mask))


def intact(victim):
    with open(victim, "rb") as f:
        return f.read() == b"another user's file\n"


def planted(out, name, victim):
    link = os.path.join(out, name)
    os.symlink(victim, link)
    return link


with tempfile.TemporaryDirectory() as tmp:
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("another user's file\n")
    out = os.path.join(tmp, "csv")
    os.mkdir(out)
    links = [planted(out, n, victim) for n in ("nodes.csv", "or_series.csv")]
    r = run_umask(0o077, "--topology", "crossbar:4", "--message-bytes", "4096", "--csv", out)
    untouched = intact(victim)
    expect(r.returncode == 0 and untouched, "a link planted at an output leaves its target be", r)
    for link in links:
        with open(link) as f:
            head = f.readline()
        expect(not os.path.islink(link) and os.path.isfile(link) and "," in head
               and os.stat(link).st_mode & 0o777 == 0o600,
               f"{os.path.basename(link)} replaces the link, mode 0600 under umask 077", r)
    loads = os.path.join(tmp, "loads")
    os.mkdir(loads)
    link = planted(loads, "load_sweep.csv", victim)
    r = run_umask(0o022, "--topology", "crossbar:4", "--sweep-load", "0.2", "--acks", "none",
                  "--pci-mbps", "0", "--measure", "20", "--csv", loads)
    untouched = intact(victim)
    expect(r.returncode == 0 and untouched and not os.path.islink(link)
           and os.stat(link).st_mode & 0o777 == 0o644,
           "a load sweep's CSV replaces a planted link, mode 0644 under umask 022", r)
    if shutil.which("gnuplot"):
        plots = os.path.join(tmp, "plots")
        os.mkdir(plots)
        pl = [planted(plots, n, victim) for n in ("rtt_histogram.png", "rtt_histogram.gp")]
        r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--plot", plots)
        untouched = intact(victim)
        with open(pl[0], "rb") as f:
            png = f.read(8) == b"\x89PNG\r\n\x1a\n"
        expect(r.returncode == 0 and untouched and png and not any(map(os.path.islink, pl))
               and not [n for n in os.listdir(plots) if n.startswith(".")],
               "a plot and its script replace planted links, no temporary is left", r)

    # A directory any user may change (no sticky bit) is refused before anything is written.
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--csv", shared)
    expect(r.returncode == 2 and f"sansim: not writing {shared}/nodes.csv: {shared} is writable "
           "by every user and not sticky" in r.stderr and os.listdir(shared) == [],
           "an output directory others may change is refused and left empty", r)
    # An output name taken by a directory: the rename fails, and the temporary goes with it.
    taken = os.path.join(tmp, "taken")
    os.makedirs(os.path.join(taken, "links.csv", "inside"))
    r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--csv", taken)
    expect(r.returncode == 2 and f"sansim: cannot write {taken}/links.csv: " in r.stderr
           and sorted(os.listdir(taken)) == ["links.csv", "nodes.csv"]
           and os.listdir(os.path.join(taken, "links.csv")) == ["inside"],
           "an output that cannot be written is named, exit 2, and no temporary is left", r)
    # The output directory vanishes (here: is a file) when sansim comes to write.
    r = run("--topology", "crossbar:4", "--message-bytes", "4096", "--csv", victim + "/csv")
    expect(r.returncode == 2 and "sansim: " in r.stderr and victim in r.stderr,
           "an output directory that cannot exist is a named error", r)

for f in failures:
    print("FAIL:", f)
print(f"{checks - len(failures)} of {checks} command-line checks passed")
sys.exit(1 if failures else 0)
