#!/usr/bin/env python3
"""scripts/sort-cluster-bench.py on tiny partitions (4 nodes x 2M) against the real build:
every algorithm present and checked by sortcheck, positive seconds, the two-pass run in two
passes below its share, the speedups, node 0's partition sorted by sortapp local and (where
built) STXXL; inputs made and removed; --reuse keeping its inputs;
a refusal to touch inputs it did not make, and a refusal when the disk is too small.
usage: sort_cluster_bench_test.py SORT_CLUSTER_BENCH_PY BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile

BENCH, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def bench(d, *extra):
    # The page cache is the machine's, not the test's: left alone here.
    cmd = [sys.executable, BENCH, "--build", BUILD, "--dir", d, "--nodes", "4", "--size", "2M",
           "--no-drop-caches"] + list(extra)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1200)


def check_report(p, reused):
    check(p.returncode == 0, f"the bench exits 0 (got {p.returncode}: {p.stderr[-1500:]})")
    if p.returncode != 0:
        return
    res = json.loads(p.stdout)
    runs = {r["key"]: r for r in res["runs"]}
    check(sorted(runs) == ["river-1-pass", "river-2-pass", "three-phase"],
          f"every algorithm ran: {sorted(runs)}")
    check(res["records"] == 4 * ((2 << 20) // 100), f"records: {res['records']}")
    check(res["inputs_reused"] == reused, f"inputs_reused is {reused}")
    check(res["disk"]["read_mb_s"] > 0 and res["disk"]["write_mb_s"] > 0, "disk rates > 0")
    check(res["fresh_memory_gb_s"] > 0, f"fresh-memory rate {res['fresh_memory_gb_s']}")
    for key, r in runs.items():
        check(r["sortcheck"] == "ok", f"{key}: sortcheck ok")
        check(r["wall_seconds"] > 0 and r["sort_seconds"] > 0, f"{key}: positive seconds")
        # Exact splits for three-phase (within a record); sampled splitters for the river.
        most = 1.001 if key == "three-phase" else 1.5
        check(r["balance"] is not None and 1.0 <= r["balance"] < most,
              f"{key}: balance {r['balance']}")
        check(sum(r["partition_records"]) == res["records"], f"{key}: partitions add up")
        check(r["phase_ratios"], f"{key}: per-phase ratios")
        check(r["cpu_seconds_per_gb"] is not None and r["cpu_seconds_per_gb"] > 0,
              f"{key}: CPU-seconds per GB {r['cpu_seconds_per_gb']}")
        check(r["startup_seconds"] is not None and 0 < r["startup_seconds"] < r["wall_seconds"],
              f"{key}: start-up {r['startup_seconds']} s of {r['wall_seconds']} s")
        # Each node's resident memory holds at least its share of the records.
        check(r["peak_rss_bytes"] is not None and r["peak_rss_bytes"] > 4 * (2 << 20),
              f"{key}: peak resident memory {r['peak_rss_bytes']}")
        check(r["fresh_memory_cpu_seconds"] is not None and r["fresh_memory_cpu_seconds"] > 0,
              f"{key}: fresh-memory CPU-seconds {r['fresh_memory_cpu_seconds']}")
        if res["device"] is not None:
            check(r["disk_bytes_read"] >= 0 and r["disk_bytes_written"] >= 0, f"{key}: disk bytes")
    check(runs["three-phase"]["algorithm"] == "three-phase", "three-phase's report")
    check(runs["river-1-pass"]["one_pass_nodes"] == 4, "river one pass: every node one pass")
    check(runs["river-2-pass"]["one_pass_nodes"] == 0, "river two passes: no node one pass")
    check("--memory 1048576" in runs["river-2-pass"]["command"],
          "--two-pass-memory reaches sortapp")
    one = res["one_node"]
    check(one is not None and one["memory"] >= 8 << 20 and one["partition_bytes"] > 0,
          f"one-node runs: {one}")
    if one is not None:
        check(one["sortapp"]["wall_seconds"] > 0 and one["sortapp"]["cpu_seconds_per_gb"] > 0,
              f"sortapp local's figures: {one['sortapp']}")
        # Where the tree built the STXXL peer, it ran on the same partition and memory.
        built = os.access(os.path.join(BUILD, "sortapp", "stxxl_sort"), os.X_OK)
        x = one["stxxl"]
        check((x is not None and x.get("wall_seconds", 0) > 0 and one["speedup_vs_stxxl"] > 0)
              if built else x is None, f"stxxl (built: {built}): {x}")
    s = res["speedups"]
    check(s["river_one_pass_vs_three_phase"] > 0 and s["river_two_pass_vs_three_phase"] > 0,
          "speedups present")
    # With the disk's figures, the speedup the river's own limit allows (three-phase wall over
    # the river's limit) is there too; without them it is null.
    limit = res["runs"][1]["physical_limit_seconds"]
    check(res["speedup_at_river_limit"] is None if limit is None else
          abs(res["speedup_at_river_limit"] - res["runs"][0]["wall_seconds"] / limit) < 1e-9,
          f"speedup at the river's limit: {res['speedup_at_river_limit']}")


def inputs_in(d):
    return sorted(f for f in os.listdir(d) if f.startswith("in.") or f == "inputs.json")


def main():
    with tempfile.TemporaryDirectory(prefix="sort-cluster-bench-test-") as top:
        # A run that makes its inputs removes them, and everything else it wrote.
        d = os.path.join(top, "fresh")
        check_report(bench(d, "--json", "--two-pass-memory", "1M"), reused=False)
        check(not os.path.exists(d), f"the fresh run left {d} behind")
        check(not any(f.startswith("stxxl") for f in os.listdir(".")),
              f"STXXL's logs left in the working directory {os.getcwd()}")

        # --reuse makes the inputs once, keeps them, and sorts them again.
        d = os.path.join(top, "kept")
        p = bench(d, "--reuse", "--two-pass-memory", "1M")
        check(p.returncode == 0 and "speedup over three-phase" in p.stdout,
              f"the text table ({p.returncode}): {p.stdout[-1500:]} {p.stderr[-1500:]}")
        check(inputs_in(d) == ["in.0", "in.1", "in.2", "in.3", "inputs.json"], "inputs kept")
        check_report(bench(d, "--reuse", "--json", "--two-pass-memory", "1M"), reused=True)
        check(sorted(os.listdir(d)) == ["in.0", "in.1", "in.2", "in.3", "inputs.json"],
              f"only the inputs remain: {sorted(os.listdir(d))}")

        # Without --reuse, inputs already there are refused and left alone.
        p = bench(d, "--json")
        check(p.returncode != 0 and "--reuse" in p.stderr, f"refused without --reuse: {p.stderr}")
        check(inputs_in(d) == ["in.0", "in.1", "in.2", "in.3", "inputs.json"], "inputs untouched")

        # A disk too small is named before anything is written.
        d = os.path.join(top, "huge")
        p = subprocess.run([sys.executable, BENCH, "--build", BUILD, "--dir", d, "--size", "100T"],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode != 0 and "not enough free space" in p.stderr, f"space: {p.stderr}")
        check(not os.path.exists(d), "nothing written when space is short")
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("sort-cluster-bench: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
