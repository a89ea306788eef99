// The distributed sort's command line (see options.hpp).
#include "options.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sortapp/record_format.hpp"

namespace sortapp::cluster {

namespace {

const char kUsage[] =
    "usage: sortapp run -n N --input PATTERN --output PATTERN [options]\n"
    "       sortapp job --input PATTERN --output PATTERN [options]\n"
    "\n"
    "The distributed sort: N sort processes (a sorting thread and a shadow thread each) and\n"
    "a monitor. Every node sorts its input partition (phases 1 and 2), the monitor finds the\n"
    "exact output partition boundaries across all nodes (phase 3a), and every node pulls its\n"
    "partition from all nodes through libremoteio and merges it (phase 3b). The node-order\n"
    "concatenation of the outputs is sorted and holds exactly the input records.\n"
    "\n"
    "`run` starts the N nodes and the monitor on this machine (through msgrun). `job` is one\n"
    "process of a job started any other way (msgrun, mpirun, srun, the TCP rendezvous):\n"
    "the job's last rank is the monitor, ranks 0..N-1 sort.\n"
    "\n"
    "  -n, --nodes N          (run) sort processes (1..256)\n"
    "  --input PATTERN        node input files; {rank} becomes the node's rank\n"
    "  --output PATTERN       node output files\n"
    "  --scratch PATTERN      where a node keeps its runs and work file (default: the\n"
    "                         output's directory)\n"
    "  --memory BYTES         memory budget per node (default: the node's own, from\n"
    "                         /proc/meminfo and cgroup limits)\n"
    "  --record-size BYTES    record size (default 100)\n"
    "  --key-size BYTES       key size, the record's first bytes (default 10)\n"
    "  --block BYTES          phase 3b remote read size (default 512K)\n"
    "  --depth N              phase 3b reads in flight per source node (default 4)\n"
    "  --algorithm A          three-phase (default): local sort, exact selection, merge\n"
    "                         over remote I/O; river: NOW-Sort's parallel sort, records\n"
    "                         sent to their node by sampled splitters while they are read\n"
    "  --passes P             (river) auto (default): one pass when a node's share fits its\n"
    "                         memory, else two; 1 or 2 to force (1 fails if it does not fit)\n"
    "  --network-mb-s MB/S    network bandwidth for the expectations (default: measured)\n"
    "  --straggler FACTOR     name nodes slower than the median by this much (default 1.25)\n"
    "  --provider NAME        libfabric provider (VIADUCT_PROVIDER)\n"
    "  --protocol P           long-message protocol: sendrecv | rdma | rdma-write\n"
    "                         (VIADUCT_PROTOCOL)\n"
    "  --restricted, --unrestricted   libmsg's long-message mode (VIADUCT_RESTRICTED)\n"
    "  --timeout SECONDS      (run) give up after this long (default 3600): every process\n"
    "                         gets SIGTERM, then SIGKILL after a grace period\n"
    "  --stall-timeout SECONDS  a node or monitor that answers nothing for this long is\n"
    "                         declared stopped and the job fails (default 30)\n"
    "  --job-id ID            names the files the job creates (.sortapp-job-ID-RANK in the\n"
    "                         scratch directory); `run` picks a random one\n"
    "  --same-input           every node reads the file --input names (no {rank}): on one\n"
    "                         host that sorts N copies of it\n"
    "  --remeasure            measure every scratch disk again, not the cached figures\n"
    "  --json                 print the report as one JSON object\n"
    "  -h, --help             this text\n";

bool size_arg(const std::string &name, const char *text, uint64_t &out) {
    if (!parse_size(text, out)) {
        std::fprintf(stderr, "sortapp: %s: '%s' is not a size\n", name.c_str(), text);
        return false;
    }
    return true;
}

// One option of the command line: its name ("--input" also for "--input=x") and its value.
class Arg {
  public:
    Arg(int argc, char **argv, int &i) : name(argv[i]), argc_(argc), argv_(argv), i_(i) {
        eq_ = name.find('=');
        inline_value_ = name.rfind("--", 0) == 0 && eq_ != std::string::npos;
        if (inline_value_) name.resize(eq_);
    }
    // The value (after '=', or the next argument); null, with the problem printed, if none.
    const char *take(const char *option) {
        if (inline_value_) return argv_[i_] + eq_ + 1;
        if (i_ + 1 >= argc_) {
            std::fprintf(stderr, "sortapp %s: %s needs a value\n", argv_[0], option);
            return nullptr;
        }
        return argv_[++i_];
    }

    std::string name;

  private:
    int argc_;
    char **argv_;
    int &i_;
    size_t eq_ = 0;
    bool inline_value_ = false;
};

// What an option parser made of an option: taken, refused (problem printed), or not its own.
enum class Parsed { taken, refused, not_mine };

// The options `run` hands on to every `job` process.
void forward(JobOptions &o, const Arg &a, const char *value) {
    o.forwarded.push_back(a.name);
    if (value != nullptr) o.forwarded.push_back(value);
}

Parsed parse_flag(Arg &a, bool, JobOptions &o) {
    if (a.name == "--json") {
        o.json = true;
    } else if (a.name == "--restricted" || a.name == "--unrestricted") {
        o.restricted = a.name == "--restricted";
    } else if (a.name == "--same-input") {
        o.same_input = true;
    } else if (a.name == "--remeasure") {
        o.params.remeasure = 1;
    } else {
        return Parsed::not_mine;
    }
    forward(o, a, nullptr);
    return Parsed::taken;
}

// -n and --timeout: `run`'s own, never forwarded.
Parsed parse_run_option(Arg &a, bool is_run, JobOptions &o) {
    const char *v = nullptr;
    if ((a.name == "-n" || a.name == "--nodes") && is_run) {
        if (!(v = a.take("--nodes"))) return Parsed::refused;
        char *end = nullptr;
        long k = std::strtol(v, &end, 10);
        if (*v == '\0' || *end != '\0' || k < 1 || k > 256) {
            std::fprintf(stderr, "sortapp run: --nodes: '%s' is not a number in [1, 256]\n", v);
            return Parsed::refused;
        }
        o.nodes = static_cast<int>(k);
    } else if (a.name == "--timeout" && is_run) {
        if (!(v = a.take("--timeout"))) return Parsed::refused;
        o.timeout_s = std::atol(v);
        if (o.timeout_s < 1) {
            std::fprintf(stderr, "sortapp run: --timeout: '%s' is not a positive number\n", v);
            return Parsed::refused;
        }
    } else {
        return Parsed::not_mine;
    }
    return Parsed::taken;
}

Parsed parse_job_id(Arg &a, JobOptions &o) {
    const char *v = a.take("--job-id");
    if (v == nullptr) return Parsed::refused;
    o.job_id = v;
    bool ok = !o.job_id.empty() && o.job_id.size() <= 32;
    for (char ch : o.job_id) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-');
    if (!ok) {
        std::fprintf(stderr, "sortapp: --job-id: '%s' is not 1-32 letters, digits or '-'\n", v);
        return Parsed::refused;
    }
    forward(o, a, v);
    return Parsed::taken;
}

// --algorithm and --passes: one of a few words.
Parsed parse_choice(Arg &a, JobOptions &o) {
    const char *v = a.take(a.name.c_str());
    if (v == nullptr) return Parsed::refused;
    const std::string w = v;
    if (a.name == "--algorithm" && (w == "three-phase" || w == "river")) {
        o.params.algorithm = w == "river" ? kRiver : kThreePhase;
    } else if (a.name == "--passes" && (w == "auto" || w == "1" || w == "2")) {
        o.params.passes = w == "auto" ? 0 : static_cast<uint32_t>(w[0] - '0');
    } else {
        std::fprintf(stderr, "sortapp: %s: '%s' is not %s\n", a.name.c_str(), v,
                     a.name == "--algorithm" ? "three-phase or river" : "auto, 1 or 2");
        return Parsed::refused;
    }
    forward(o, a, v);
    return Parsed::taken;
}

// Paths, names and the job id.
Parsed parse_text_option(Arg &a, bool, JobOptions &o) {
    if (a.name == "--job-id") return parse_job_id(a, o);
    if (a.name == "--algorithm" || a.name == "--passes") return parse_choice(a, o);
    std::string *field = a.name == "--input"      ? &o.input
                         : a.name == "--output"   ? &o.output
                         : a.name == "--scratch"  ? &o.scratch
                         : a.name == "--provider" ? &o.provider
                         : a.name == "--protocol" ? &o.protocol
                                                  : nullptr;
    if (field == nullptr) return Parsed::not_mine;
    const char *v = a.take(a.name.c_str());
    if (v == nullptr) return Parsed::refused;
    *field = v;
    if (a.name == "--protocol" && o.protocol != "rdma" && o.protocol != "sendrecv" &&
        o.protocol != "rdma-write") {
        std::fprintf(stderr, "sortapp: --protocol: '%s' is not sendrecv, rdma or rdma-write\n", v);
        return Parsed::refused;
    }
    forward(o, a, v);
    return Parsed::taken;
}

// Sizes (with K, M, G) and counts.
Parsed parse_size_option(Arg &a, bool, JobOptions &o) {
    uint64_t *field = a.name == "--memory"        ? &o.params.memory_budget
                      : a.name == "--record-size" ? &o.params.record_size
                      : a.name == "--key-size"    ? &o.params.key_size
                      : a.name == "--block"       ? &o.params.block_bytes
                                                  : nullptr;
    const char *v = nullptr;
    if (field != nullptr) {
        uint64_t n = 0;
        if (!(v = a.take(a.name.c_str())) || !size_arg(a.name, v, n)) return Parsed::refused;
        *field = n;
    } else if (a.name == "--depth") {
        if (!(v = a.take("--depth"))) return Parsed::refused;
        long k = std::atol(v);
        if (k < 2 || k > 64) {
            std::fprintf(stderr, "sortapp: --depth: '%s' is not a number in [2, 64]\n", v);
            return Parsed::refused;
        }
        o.params.read_depth = static_cast<uint32_t>(k);
    } else {
        return Parsed::not_mine;
    }
    forward(o, a, v);
    return Parsed::taken;
}

// Seconds and rates.
Parsed parse_real_option(Arg &a, bool, JobOptions &o) {
    const char *v = nullptr;
    if (a.name == "--stall-timeout") {
        if (!(v = a.take("--stall-timeout"))) return Parsed::refused;
        double d = std::atof(v);
        if (!(d >= 1 && d <= 86400)) {
            std::fprintf(stderr,
                         "sortapp: --stall-timeout: '%s' is not a number of seconds "
                         "in [1, 86400]\n",
                         v);
            return Parsed::refused;
        }
        o.stall_ms = static_cast<int>(d * 1000);
    } else if (a.name == "--network-mb-s" || a.name == "--straggler") {
        if (!(v = a.take(a.name.c_str()))) return Parsed::refused;
        double d = std::atof(v);
        if (!(d > 0)) {
            std::fprintf(stderr, "sortapp: %s: '%s' is not a positive number\n", a.name.c_str(), v);
            return Parsed::refused;
        }
        (a.name == "--straggler" ? o.straggler : o.network_mb_s) = d;
    } else {
        return Parsed::not_mine;
    }
    forward(o, a, v);
    return Parsed::taken;
}

// What every command line needs, once all its options are read.
bool complete(const JobOptions &o, bool is_run, const char *command) {
    if (is_run && o.nodes == 0) {
        std::fprintf(stderr, "sortapp run: -n N is required (see --help)\n");
        return false;
    }
    if (o.input.empty() || o.output.empty()) {
        std::fprintf(stderr, "sortapp %s: --input and --output are required (see --help)\n",
                     command);
        return false;
    }
    RecordFormat f{static_cast<size_t>(o.params.record_size),
                   static_cast<size_t>(o.params.key_size)};
    Status s = f.validate();
    if (!s) {
        std::fprintf(stderr, "sortapp: %s\n", s.message().c_str());
        return false;
    }
    if (o.params.block_bytes < o.params.record_size || o.params.block_bytes > (64u << 20)) {
        std::fprintf(stderr, "sortapp: --block must hold a record and be at most 64M\n");
        return false;
    }
    return true;
}

}  // namespace

std::string expand(const std::string &pattern, int rank) {
    std::string out = pattern;
    const std::string tag = "{rank}";
    for (size_t at = out.find(tag); at != std::string::npos; at = out.find(tag, at))
        out.replace(at, tag.size(), std::to_string(rank));
    return out;
}

bool parse_job_options(int argc, char **argv, bool is_run, JobOptions &o, int *exit_code) {
    *exit_code = 2;
    for (int i = 1; i < argc; ++i) {
        Arg a(argc, argv, i);
        if (a.name == "-h" || a.name == "--help") {
            std::fputs(kUsage, stdout);
            *exit_code = 0;
            return false;
        }
        Parsed p = Parsed::not_mine;
        for (auto parse : {parse_flag, parse_run_option, parse_text_option, parse_size_option,
                           parse_real_option})
            if ((p = parse(a, is_run, o)) != Parsed::not_mine) break;
        if (p == Parsed::refused) return false;
        if (p == Parsed::not_mine) {
            std::fprintf(stderr, "sortapp %s: unknown option '%s' (see --help)\n", argv[0],
                         argv[i]);
            return false;
        }
    }
    if (!complete(o, is_run, argv[0])) return false;
    *exit_code = 0;
    return true;
}

}  // namespace sortapp::cluster
