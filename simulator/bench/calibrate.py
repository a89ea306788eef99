#!/usr/bin/env python3
"""Fits sansim's link model to libmsg as measured on this machine (local processes, libfabric
shm or tcp), so that replays of real traces (--workload replay) predict real runs.

Runs msg-pingpong (ranks 0 and 1) and msg-alltoall (4 ranks) under msgrun, several times,
keeping the fastest figure of each size (other work on the machine only slows a run down),
and fits:
  link rate       the rate at which sansim's all-to-all on a 4-node crossbar moves what the
                  measured one moved per rank (found by simulating, three rounds of scaling):
                  the ranks share the host's memory and cores, as a sort's ranks do, so a
                  pair alone runs much faster (the ping-pong's slope, printed) than each of
                  four at once, and the all-to-all is the pattern replays of sorts need
  latency         zero-load one-way time of an eager message, split into a fixed network part
                  (link delay 50 ns each way, switch delay 100 ns: a local host has neither,
                  and one-host runs cannot tell them apart) and the per-message overhead
                  (--eager-us) that holds the rest
  long-message handshake (--setup-us)
                  the long messages' intercept, corrected once by simulating the ping-pong on
                  the fitted model and moving the handshake by the difference
The eager one-way time is the fastest of the sizes up to 1 KiB: on a loaded 2-core host the
others mostly measure the wait for a core.
Other figures are chosen, not fitted: 4 KiB packets with 64-byte headers, ideal endpoints
(--pci-mbps 0), no acknowledgement traffic (--acks none: shared memory has none), 64 KiB
message-layer chunks, 8 in flight per message, 16 outstanding requests per NIC.

Prints the fitted figures, sansim's predictions of the same benchmarks on the model beside
the measurements, and writes the model as sansim options, one per line (default
simulator/bench/local-model.opts; use as `sansim $(grep -v '^#' FILE) ...`).

usage: calibrate.py [-b BUILD] [--provider shm|tcp] [--runs N] [--out FILE] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXED = ["--max-payload", "4096", "--header-bytes", "64", "--pci-mbps", "0", "--acks", "none",
         "--chunk-bytes", "65536", "--window", "8", "--outstanding", "16",
         "--fifo-bytes", "16384", "--link-delay-ns", "50", "--hop-latency-ns", "100"]
NET_US = 0.2  # the fixed network part of a zero-byte one-way time: 2 x 50 ns + 100 ns
LONG_MIN = 256 * 1024


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out[out.index("{"):])


def provider_name(p):
    return "tcp;ofi_rxm" if p == "tcp" else p


def measure_pingpong(build, provider, runs):
    """{bytes: fastest one-way us} over `runs` runs."""
    best = {}
    for _ in range(runs):
        j = run_json([f"{build}/libmsg/tools/msgrun", "-n", "2",
                      f"{build}/libmsg/bench/msg-pingpong", "--provider", provider_name(provider),
                      "--max", "4M", "--json"])
        for row in j["results"]:
            n = row["bytes"]
            best[n] = min(best.get(n, float("inf")), row["latency_us"])
    return best


def measure_alltoall(build, provider, runs, nbytes):
    """The best per-rank bidirectional MB/s of a 4-rank all-to-all of nbytes messages."""
    best = 0.0
    for _ in range(runs):
        j = run_json([f"{build}/libmsg/tools/msgrun", "-n", "4",
                      f"{build}/libmsg/bench/msg-alltoall", "--provider", provider_name(provider),
                      "--bytes", str(nbytes), "--iters", "40", "--json"])
        best = max(best, j["per_rank_bidir_mbps"])
    return best


def fit_line(points):
    """Least squares t = a + n * s over (n, t) points: (a, s)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    s = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - s * mx, s


def sansim(build, opts, args):
    j = run_json([f"{build}/simulator/sansim", *opts, *args, "--json"])
    return j["sim_time_us"]


def sim_pingpong(build, opts, nbytes, rounds=4):
    t = sansim(build, opts, ["--topology", "crossbar:2", "--workload", "pingpong",
                             "--message-bytes", str(max(1, nbytes)), "--rounds", str(rounds)])
    return t / (2 * rounds)


def sim_alltoall_bidir(build, opts, nbytes, rounds=10):
    t = sansim(build, opts, ["--topology", "crossbar:4", "--workload", "alltoall",
                             "--message-bytes", str(max(1, nbytes)), "--rounds", str(rounds)])
    return 2 * 3 * rounds * nbytes / t  # bytes sent + received per rank, per us = MB/s


def fit(build, pp, a2a_mbps, eager_max):
    small = [t for n, t in pp.items() if n <= 1024]
    eager_one_way = min(small)
    a, s = fit_line([(n, t) for n, t in pp.items() if n >= LONG_MIN])
    pingpong_mbps = 1 / s
    link_mbps = a2a_mbps / 2
    model = {"link_mbps": link_mbps, "pingpong_mbps": pingpong_mbps,
             "alltoall_link_mbps": a2a_mbps / 2, "eager_one_way_us": eager_one_way,
             "long_intercept_us": a, "eager_us": max(0.0, eager_one_way - NET_US),
             "setup_us": max(0.0, a - NET_US)}
    for _ in range(3):
        model["link_mbps"] *= a2a_mbps / sim_alltoall_bidir(build, options(model), 512 * 1024)
    # One correction of the handshake: simulate a long ping-pong, move setup_us by the error.
    probe = 1 << 20
    measured = min(t for n, t in pp.items() if n == probe)
    model["setup_us"] = max(0.0, model["setup_us"] + measured - sim_pingpong(
        build, options(model), probe))
    return model


def options(m):
    return FIXED + ["--link-mbps", f"{m['link_mbps']:.1f}", "--eager-us", f"{m['eager_us']:.3f}",
                    "--setup-us", f"{m['setup_us']:.3f}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--provider", default="shm", choices=["shm", "tcp"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "simulator", "bench", "local-model.opts"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    pp = measure_pingpong(a.build, a.provider, a.runs)
    a2a = measure_alltoall(a.build, a.provider, a.runs, 512 * 1024)
    model = fit(a.build, pp, a2a, 8192)
    opts = options(model)
    checks = []
    for n in (0, 1024, 64 * 1024, 1 << 20, 4 << 20):
        checks.append({"bench": "pingpong one-way us", "bytes": n, "measured": pp[n],
                       "predicted": sim_pingpong(a.build, opts, n)})
    checks.append({"bench": "alltoall per-rank bidir MB/s", "bytes": 512 * 1024,
                   "measured": a2a, "predicted": sim_alltoall_bidir(a.build, opts, 512 * 1024)})
    with open(a.out + ".tmp", "w") as f:
        f.write(f"# sansim link model fitted by simulator/bench/calibrate.py ({a.provider}, "
                f"{a.runs} runs): link {model['link_mbps']:.1f} MB/s, eager one-way "
                f"{model['eager_one_way_us']:.2f} us, long intercept "
                f"{model['long_intercept_us']:.2f} us\n")
        for i in range(0, len(opts), 2):
            f.write(f"{opts[i]} {opts[i + 1]}\n")
    os.replace(a.out + ".tmp", a.out)
    if a.json:
        print(json.dumps({"model": model, "options": opts, "checks": checks}, indent=1))
        return 0
    print(f"fitted on {a.provider}: link {model['link_mbps']:.1f} MB/s (ping-pong slope "
          f"{model['pingpong_mbps']:.1f}, all-to-all {model['alltoall_link_mbps']:.1f} per "
          f"direction), eager one-way {model['eager_one_way_us']:.2f} us "
          f"(--eager-us {model['eager_us']:.3f}), long handshake --setup-us "
          f"{model['setup_us']:.3f}")
    print(f"{'benchmark':30} {'bytes':>9} {'measured':>10} {'sansim':>10} {'ratio':>6}")
    for c in checks:
        print(f"{c['bench']:30} {c['bytes']:9} {c['measured']:10.2f} {c['predicted']:10.2f} "
              f"{c['predicted'] / c['measured'] if c['measured'] else 0:6.2f}")
    print(f"model written to {a.out}:\n  sansim {' '.join(opts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
