// sansim's options: the help text, the parser that turns argv into a CommandLine, and the
// checks between options. Every problem is reported as "sansim: ..." with exit status 2.
#include "app/options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

#include "viaduct/cli.hpp"

namespace sansim {
namespace {

std::string fmt_figure(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

const char *kHelp = R"(usage: sansim [options]

Discrete-event, packet-level simulator of a ServerNet-style system-area network.

Topology
  --topology SPEC        crossbar:N | ring:R[,C] | mesh:X[,Y[,Z]][/C] |
                         torus:X[,Y[,Z]][/C] | fattree:K,N[,OVERSUB] | dragonfly:A,P,H[,G] |
                         dual:N | chain:H | FILE
                         (default dual:64, the two-fabric 6-port-router network)
  --fabrics 1|2          fabrics for generators other than dual (default 1)
  --routing RULE         override: updown | xy | shortest | minimal | valiant | table
  --ties T               among equal next hops: hash (default; of router and destination) |
                         dmodk (destination digit per level: fat-tree d-mod-k)
  --fabric-choice C      shortest (default) | balance | x | y

Flow control and virtual lanes
  --flow-control F       packet (default; ServerNet: room for a whole packet, seen at once) |
                         credit (InfiniBand: per-lane credits, returned a link delay after the
                         buffer drains)
  --vls N                virtual lanes per link, 1 to 16 (default 1)
  --vl-buffer-bytes B    input buffer per lane (default: --fifo-bytes)
  --credit-bytes B       credit unit, a power of two (default 64)
  --vl-rule R            lane per hop: none (lane 0) | dateline (tori, with --routing xy) |
                         group (dragonflies: one lane more per global link) | spread
                         (destination mod lanes throughout: less head-of-line blocking)

Workload
  --workload W           alltoall (default) | permutation | hotspot | pingpong | phase3b |
                         trace | replay | openloop
  --nodes N              use nodes 0..N-1 (default: all)
  --message-bytes B      long-message size (default 524288)
  --rounds R             messages per pair / per node (default 1)
  --alltoall-window K    alltoall: sends each node keeps posted, the next posted as one
                         completes (default 32, MPICH's throttle; 0: all at once)
  --alltoall-order O     alltoall: random (default; per node) | pairwise (node s's i-th
                         send to s + i, as MPI's pairwise exchange)
  --protocol P           unrestricted (default) | restricted | both
  --chunk-bytes B        message layer transfer size (default 4096)
  --window W             transfers in flight per message (default 2)
  --setup-us T           per-message handshake (default 5)
  --hot-fraction F       hotspot: share of messages to node 0 (default 1)
  --request-bytes B      phase3b transfer size (default 4096); openloop (default one packet)
  --read-fraction F      phase3b share of reads (default 0.5)
  --rate R               phase3b requests per second per node (default 4700)
  --trace FILE           trace: lines "time_us src dst bytes send|read|write"
  --replay PATH          replay: libmsg traces (VIADUCT_TRACE files): a directory, file or
                         glob pattern; reports the predicted time beside the recorded one
  --replay-map M         replay: identity (rank r on node r, default) | spread (evenly)
  --eager-us T           replay: per-message overhead of an eager message (default 1)
  --seed S               random seed (default 1)
  --time-limit-us T      stop after T us of simulated time (phase3b default 20000
                         without --measure)
  --sweep-nodes LIST     run once per node count, e.g. 2,4,8,16,32,64

Open-loop experiments (--workload openloop)
  --load F               offered load per node, a fraction of its injection capacity (0.1)
  --injection I          bernoulli (default; one try per transfer time, load capped at 1) |
                         poisson
  --pattern P            uniform (default) | permutation | transpose | hotspot | alltoall |
                         next_group (to the next group: dragonfly's adversarial traffic)
  --self                 destinations include the source itself
  --sweep-load LIST      one run per offered load, e.g. 0.1,0.2,...,0.9: latency against
                         offered load and the saturation point (implies --workload openloop)
  --acks A               write acknowledgements: inband (default) | separate (an ideal path
                         of its own) | none (writes end on arrival and hold no request slot)

Measurement
  --warmup T             statistics start T us into the run (default 0)
  --measure T            ... and count only what is injected in the next T us; the run then
                         goes on until the window's transfers are done (default: whole run)
  --drain-us T           at most T us after the window for that (default: the window's length)
  --stall-us T           no packet reaching a NIC for T us with work pending stops the run as
                         stalled, exit status 3 (default 1000; 0: never)
  --steady-tolerance F   the window's halves may differ by this fraction in throughput and
                         mean latency and still count as steady (default 0.1)

Hardware (ServerNet I defaults)
  --symbol-mhz F (50)  --link-mbps F (50)  --link-gbps F (= link-mbps / 125)
  --link-delay-ns F (10)  --hop-latency-ns F (300; the switch delay)
  --fifo-bytes N (256)  --arbitration round_robin|oldest_first
  --max-payload N (64)  --header-bytes N (16)
  --outstanding N (4)  --bte-engines N (1)  --turnaround-ns F (0)
  --pci-mbps F (132; 0 = ideal endpoints)  --pci-read-latency-ns F (1450)
  --pci-write-ns F (940)  --disk-mbps F (0; phase3b 8)  --disk-burst-bytes N (4096)
  --series-bin-us F (100)

Output
  --json                 JSON on stdout (per node, per link, histogram, time series)
  --csv DIR              nodes.csv, links.csv, rtt_histogram.csv, or_series.csv (sweep.csv)
  --plot DIR             PNGs via gnuplot: RTT histogram, link utilization, exhaustion
                         time series (runs); throughput vs node count (sweeps)
  -q, --quiet            no progress line on stderr (shown for sweeps, on a terminal, once
                         they take a second; never with --json)
  --help                 this text
  --version              "sansim (viaduct) X.Y.Z"

B and N in byte options are SIZEs: a whole number with an optional binary suffix, K or KiB
(1024), M or MiB, G or GiB, T or TiB, the letter in either case (4K = 4KiB = 4096).
)";

// Every option that takes a value (an unknown one is named as unknown, not as missing a value).
const std::set<std::string> kValueFlags = {"--acks",
                                           "--alltoall-order",
                                           "--alltoall-window",
                                           "--arbitration",
                                           "--bte-engines",
                                           "--chunk-bytes",
                                           "--credit-bytes",
                                           "--csv",
                                           "--disk-burst-bytes",
                                           "--disk-mbps",
                                           "--drain-us",
                                           "--fabric-choice",
                                           "--fabrics",
                                           "--fifo-bytes",
                                           "--flow-control",
                                           "--header-bytes",
                                           "--hop-latency-ns",
                                           "--hot-fraction",
                                           "--injection",
                                           "--load",
                                           "--link-delay-ns",
                                           "--link-gbps",
                                           "--link-mbps",
                                           "--max-payload",
                                           "--measure",
                                           "--message-bytes",
                                           "--nodes",
                                           "--outstanding",
                                           "--pattern",
                                           "--pci-mbps",
                                           "--pci-read-latency-ns",
                                           "--pci-write-ns",
                                           "--plot",
                                           "--protocol",
                                           "--rate",
                                           "--read-fraction",
                                           "--request-bytes",
                                           "--rounds",
                                           "--routing",
                                           "--seed",
                                           "--series-bin-us",
                                           "--setup-us",
                                           "--stall-us",
                                           "--steady-tolerance",
                                           "--sweep-load",
                                           "--sweep-nodes",
                                           "--symbol-mhz",
                                           "--ties",
                                           "--time-limit-us",
                                           "--topology",
                                           "--trace",
                                           "--replay",
                                           "--replay-map",
                                           "--eager-us",
                                           "--turnaround-ns",
                                           "--vl-buffer-bytes",
                                           "--vl-rule",
                                           "--vls",
                                           "--warmup",
                                           "--window",
                                           "--workload"};

double to_double(const std::string &flag, const std::string &v) {
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size() && std::isfinite(d)) return d;
    } catch (const std::exception &) {
    }
    usage_die(flag + ": '" + v + "' is not a finite number");
}

// Every figure is bounded: simulated time is int64 picoseconds (about 106 days), so times and
// rates past these would wrap round rather than mean anything.
constexpr double kMaxFigure = 1e12;

double nonneg(const std::string &flag, const std::string &v, double hi = kMaxFigure) {
    const double d = to_double(flag, v);
    if (d < 0) usage_die(flag + ": must not be negative");
    if (d > hi) usage_die(flag + ": " + v + " is above the limit of " + fmt_figure(hi));
    return d;
}

// A rate in MB/s (or MHz): 0 where `zero` says what 0 means, else at least 0.001 (a byte a
// millisecond), as a topology file's links; slower rates overflow the picoseconds per byte.
double rate(const std::string &flag, const std::string &v, bool zero_allowed) {
    const double d = nonneg(flag, v, 1e9);
    if (d < 0.001 && !(zero_allowed && d == 0))
        usage_die(flag + ": " + v + " is below 0.001" + (zero_allowed ? " (and not 0)" : ""));
    return d;
}

int to_int(const std::string &flag, const std::string &v, long lo, long hi) {
    return static_cast<int>(to_long(flag, v, lo, hi));
}

// A SIZE (viaduct::cli, the syntax every tool shares) in [lo, hi].
std::uint64_t to_bytes(const std::string &flag, const std::string &v, long hi, long lo = 1) {
    auto n = viaduct::cli::size(v, static_cast<unsigned long long>(lo),
                                static_cast<unsigned long long>(hi));
    if (!n) usage_die(viaduct::cli::size_problem(flag, v, lo, hi));
    return *n;
}

int to_size_int(const std::string &flag, const std::string &v, long lo, long hi) {
    return static_cast<int>(to_bytes(flag, v, hi, lo));
}

// One option and its value at a time; each group of the help text has its own setter, which
// answers whether the option was its own.
struct Parser {
    CommandLine &cl;
    bool disk_set = false;  // --disk-mbps given: phase3b keeps it instead of its default
    bool workload_set = false;

    bool topology_option(const std::string &flag, const std::string &v) {
        Params &p = cl.params;
        if (flag == "--topology")
            cl.topology = v;
        else if (flag == "--fabrics")
            cl.fabrics = to_int(flag, v, 1, 2);
        else if (flag == "--routing")
            cl.routing = v;
        else if (flag == "--ties") {
            if (v != "hash" && v != "dmodk") usage_die(flag + ": hash or dmodk");
            cl.ties = v;
        } else if (flag == "--fabric-choice") {
            if (v == "shortest")
                p.fabric_choice = FabricChoice::shortest;
            else if (v == "balance")
                p.fabric_choice = FabricChoice::balance;
            else if (v == "x")
                p.fabric_choice = FabricChoice::x_only;
            else if (v == "y")
                p.fabric_choice = FabricChoice::y_only;
            else
                usage_die(flag + ": shortest, balance, x or y");
        } else
            return false;
        return true;
    }

    bool workload_option(const std::string &flag, const std::string &v) {
        WorkloadOptions &w = cl.workload;
        if (flag == "--workload") {
            w.kind = v;
            workload_set = true;
        } else if (flag == "--nodes")
            w.nodes = to_int(flag, v, 2, 1 << 16);
        else if (flag == "--message-bytes")
            w.message_bytes = to_bytes(flag, v, 1L << 40);
        else if (flag == "--rounds")
            w.rounds = to_int(flag, v, 1, 1 << 20);
        else if (flag == "--alltoall-window")
            w.alltoall_window = to_int(flag, v, 0, 1 << 30);
        else if (flag == "--alltoall-order") {
            if (v != "random" && v != "pairwise") usage_die(flag + ": random or pairwise");
            w.alltoall_order = v;
        } else if (flag == "--protocol") {
            if (v != "restricted" && v != "unrestricted" && v != "both")
                usage_die(flag + ": restricted, unrestricted or both");
            cl.protocol = v;
        } else if (flag == "--chunk-bytes")
            w.messages.transfer_bytes = to_bytes(flag, v, 1L << 32);
        else if (flag == "--window")
            w.messages.window = to_int(flag, v, 1, 1024);
        else if (flag == "--setup-us")
            w.messages.setup_us = nonneg(flag, v);
        else if (flag == "--hot-fraction")
            w.hot_fraction = nonneg(flag, v);
        else if (flag == "--request-bytes")
            w.transfer_bytes = w.open_loop_bytes = to_bytes(flag, v, 1L << 32);
        else if (flag == "--read-fraction")
            w.read_fraction = nonneg(flag, v);
        else if (flag == "--rate")
            w.requests_per_s = nonneg(flag, v, 1e9);  // one request per ns per node
        else if (flag == "--trace")
            w.trace_path = v;
        else if (flag == "--replay")
            w.replay_path = v;
        else if (flag == "--replay-map")
            w.replay_map = v;
        else if (flag == "--eager-us")
            w.eager_us = nonneg(flag, v);
        else if (flag == "--seed")
            w.seed = cl.params.route_seed =
                static_cast<std::uint64_t>(to_long(flag, v, 0, 1L << 62));
        else if (flag == "--time-limit-us") {
            cl.time_limit_us = nonneg(flag, v);
            if (cl.time_limit_us <= 0) usage_die(flag + ": must be positive");
        } else if (flag == "--sweep-nodes")
            cl.sweep = v;
        else
            return false;
        return true;
    }

    bool link_and_router_option(const std::string &flag, const std::string &v) {
        Params &p = cl.params;
        if (flag == "--symbol-mhz")
            p.symbol_mhz = rate(flag, v, false);
        else if (flag == "--link-mbps")
            p.link_mbps = rate(flag, v, true);
        else if (flag == "--link-gbps")
            p.link_mbps = rate(flag, v, true) * 125;
        else if (flag == "--link-delay-ns")
            p.link_delay_ns = nonneg(flag, v);
        else if (flag == "--hop-latency-ns")
            p.hop_latency_ns = nonneg(flag, v);
        else if (flag == "--fifo-bytes")
            p.fifo_bytes = to_size_int(flag, v, 1, 1 << 24);
        else if (flag == "--arbitration") {
            if (v == "round_robin")
                p.arbitration = Arbitration::round_robin;
            else if (v == "oldest_first")
                p.arbitration = Arbitration::oldest_first;
            else
                usage_die(flag + ": round_robin or oldest_first");
        } else if (flag == "--max-payload")
            p.max_payload = to_size_int(flag, v, 1, 4096);
        else if (flag == "--header-bytes")
            p.header_bytes = to_size_int(flag, v, 1, 4096);
        else
            return false;
        return true;
    }

    bool nic_and_bus_option(const std::string &flag, const std::string &v) {
        Params &p = cl.params;
        if (flag == "--outstanding")
            p.outstanding_limit = to_int(flag, v, 1, 1024);
        else if (flag == "--bte-engines")
            p.bte_engines = to_int(flag, v, 1, 1024);
        else if (flag == "--turnaround-ns")
            p.nic_turnaround_ns = nonneg(flag, v);
        else if (flag == "--pci-mbps")
            p.pci_mbps = rate(flag, v, true);
        else if (flag == "--pci-read-latency-ns")
            p.pci_read_latency_ns = nonneg(flag, v);
        else if (flag == "--pci-write-ns")
            p.pci_write_overhead_ns = nonneg(flag, v);
        else if (flag == "--disk-mbps") {
            p.disk_mbps = rate(flag, v, true);
            disk_set = true;
        } else if (flag == "--disk-burst-bytes")
            p.disk_burst_bytes = to_size_int(flag, v, 1, 1 << 30);
        else if (flag == "--series-bin-us") {
            // A bin per this much simulated time: finer than 0.1 us, a run of milliseconds
            // would keep tens of millions of them.
            p.series_bin_us = nonneg(flag, v);
            if (p.series_bin_us < 0.1) usage_die(flag + ": at least 0.1");
        } else
            return false;
        return true;
    }

    bool open_loop_option(const std::string &flag, const std::string &v) {
        WorkloadOptions &w = cl.workload;
        if (flag == "--load") {
            w.load = nonneg(flag, v, 100);
            if (!(w.load > 0)) usage_die(flag + ": must be positive");
        } else if (flag == "--injection") {
            if (v != "bernoulli" && v != "poisson") usage_die(flag + ": bernoulli or poisson");
            w.injection = v;
        } else if (flag == "--pattern") {
            w.pattern = v;
        } else if (flag == "--sweep-load") {
            cl.sweep_load = v;
        } else if (flag == "--acks") {
            if (v == "inband")
                cl.params.acks = AckPath::inband;
            else if (v == "separate")
                cl.params.acks = AckPath::separate;
            else if (v == "none")
                cl.params.acks = AckPath::none;
            else
                usage_die(flag + ": inband, separate or none");
        } else {
            return false;
        }
        return true;
    }

    bool measurement_option(const std::string &flag, const std::string &v) {
        Measurement &m = cl.measure;
        if (flag == "--warmup")
            m.warmup_us = nonneg(flag, v);
        else if (flag == "--measure")
            m.measure_us = nonneg(flag, v);
        else if (flag == "--drain-us")
            m.drain_us = nonneg(flag, v);
        else if (flag == "--stall-us")
            cl.params.stall_us = nonneg(flag, v);
        else if (flag == "--steady-tolerance")
            cl.params.steady_tolerance = nonneg(flag, v);
        else
            return false;
        return true;
    }

    bool lane_option(const std::string &flag, const std::string &v) {
        Params &p = cl.params;
        if (flag == "--flow-control") {
            if (v == "packet")
                p.flow_control = FlowControl::packet;
            else if (v == "credit")
                p.flow_control = FlowControl::credit;
            else
                usage_die(flag + ": packet or credit");
        } else if (flag == "--vls") {
            p.vls = to_int(flag, v, 1, 16);
        } else if (flag == "--vl-buffer-bytes") {
            p.vl_buffer_bytes = to_size_int(flag, v, 1, 1 << 24);
        } else if (flag == "--credit-bytes") {
            p.credit_bytes = to_size_int(flag, v, 1, 1 << 16);
            if ((p.credit_bytes & (p.credit_bytes - 1)) != 0) usage_die(flag + ": a power of two");
        } else if (flag == "--vl-rule") {
            if (v != "none" && v != "dateline" && v != "group" && v != "spread")
                usage_die(flag + ": none, dateline, group or spread");
            cl.vl_rule = v;
        } else {
            return false;
        }
        return true;
    }

    bool output_option(const std::string &flag, const std::string &v) {
        if (flag == "--csv")
            cl.csv_dir = v;
        else if (flag == "--plot")
            cl.plot_dir = v;
        else
            return false;
        return true;
    }

    void set(const std::string &flag, const std::string &v) {
        if (!topology_option(flag, v) && !workload_option(flag, v) &&
            !link_and_router_option(flag, v) && !nic_and_bus_option(flag, v) &&
            !open_loop_option(flag, v) && !measurement_option(flag, v) && !lane_option(flag, v) &&
            !output_option(flag, v))
            usage_die("unknown option '" + flag + "' (see --help)");
        cl.given.insert(flag);
    }

    // Checks between options, and the defaults that depend on the workload.
    void finish() {
        Params &p = cl.params;
        WorkloadOptions &w = cl.workload;
        if (p.symbol_mhz <= 0 || p.link_mbps < 0) usage_die("link bandwidth must be positive");
        if (w.read_fraction > 1 || w.hot_fraction > 1) usage_die("fractions must be within [0, 1]");
        if (w.kind == "trace" && w.trace_path.empty())
            usage_die("--workload trace needs --trace FILE");
        if (w.kind == "replay" && w.replay_path.empty())
            usage_die("--workload replay needs --replay PATH");
        if (!cl.sweep_load.empty()) {
            if (workload_set && w.kind != "openloop")
                usage_die("--sweep-load runs the openloop workload, not " + w.kind);
            if (!cl.sweep.empty()) usage_die("--sweep-load and --sweep-nodes: one sweep at a time");
            w.kind = "openloop";
        }
        // Open loops never finish: without a window or a limit, measure a default window.
        if (w.kind == "openloop" && cl.measure.measure_us <= 0 && cl.time_limit_us < 0) {
            if (cl.measure.warmup_us <= 0) cl.measure.warmup_us = 500;
            cl.measure.measure_us = 2000;
        }
        const bool window = cl.measure.measure_us > 0;
        if (w.kind == "phase3b") {
            if (!disk_set) p.disk_mbps = 8.0;
            if (cl.time_limit_us < 0 && !window) cl.time_limit_us = 20000;
        }
        if (p.disk_mbps > 0 && cl.time_limit_us < 0 && !window)
            usage_die(
                "--disk-mbps keeps the PCI bus busy forever: give --time-limit-us or --measure");
    }
};

}  // namespace

const char *help_text() {
    return kHelp;
}

void apply_topology_settings(Topology &topo, CommandLine &cl) {
    if (!cl.routing.empty()) topo.routing = cl.routing;
    if (!cl.vl_rule.empty()) topo.vl_rule = cl.vl_rule;
    if (!cl.ties.empty()) topo.ties = cl.ties;
    const FabricDefaults &d = topo.defaults;
    Params &p = cl.params;
    auto unset = [&](std::initializer_list<const char *> flags) {
        for (const char *f : flags)
            if (cl.given.count(f)) return false;
        return true;
    };
    if (d.link_mbps > 0 && unset({"--link-mbps", "--link-gbps"})) p.link_mbps = d.link_mbps;
    if (d.link_delay_ns >= 0 && unset({"--link-delay-ns"})) p.link_delay_ns = d.link_delay_ns;
    if (d.hop_latency_ns >= 0 && unset({"--hop-latency-ns"})) p.hop_latency_ns = d.hop_latency_ns;
    if (!d.flow_control.empty() && unset({"--flow-control"}))
        p.flow_control = d.flow_control == "credit" ? FlowControl::credit : FlowControl::packet;
    if (d.vls > 0 && unset({"--vls"})) p.vls = d.vls;
    if (d.vl_buffer_bytes > 0 && unset({"--vl-buffer-bytes"}))
        p.vl_buffer_bytes = d.vl_buffer_bytes;
    if (d.credit_bytes > 0 && unset({"--credit-bytes"})) p.credit_bytes = d.credit_bytes;
}

[[noreturn]] void die(const std::string &msg) {
    std::fprintf(stderr, "sansim: %s\n", msg.c_str());
    std::exit(2);
}

[[noreturn]] void usage_die(const std::string &msg) {
    viaduct::cli::usage_error("sansim", msg);
    std::exit(viaduct::cli::exit_usage);
}

long to_long(const std::string &flag, const std::string &v, long lo, long hi) {
    long n = 0;
    try {
        std::size_t used = 0;
        n = std::stol(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
    } catch (const std::exception &) {
        usage_die(flag + ": '" + v + "' is not an integer");
    }
    if (n < lo || n > hi)
        usage_die(flag + ": " + v + " out of range [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
    return n;
}

// CLI11 reads the words (--flag=value, --flag value, --help, --version); kValueFlags is the
// table of options with a value, each handed to the Parser's setters after parsing.
CommandLine parse_command_line(int argc, char **argv) {
    CommandLine cl;
    Parser parser{cl};
    CLI::App app;
    viaduct::cli::setup(app, "sansim");
    app.formatter_fn([](const CLI::App *, std::string, CLI::AppFormatMode) { return kHelp; });
    app.add_flag("--json", cl.json);
    app.add_flag("--self", cl.workload.self);
    app.add_flag("-q,--quiet", cl.quiet);
    for (const std::string &flag : kValueFlags)
        app.add_option_function<std::string>(
            flag, [&parser, flag](const std::string &v) { parser.set(flag, v); });
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) std::exit(rc);
    parser.finish();
    return cl;
}

}  // namespace sansim
