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
    "  --json                 print the report as one JSON object\n"
    "  -h, --help             this text\n";

bool size_arg(const std::string &name, const char *text, uint64_t &out) {
    if (!parse_size(text, out)) {
        std::fprintf(stderr, "sortapp: %s: '%s' is not a size\n", name.c_str(), text);
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
        std::string a = argv[i];
        std::string value;
        auto eq = a.find('=');
        bool inline_value = a.rfind("--", 0) == 0 && eq != std::string::npos;
        if (inline_value) {
            value = a.substr(eq + 1);
            a.resize(eq);
        }
        auto take = [&](const char *name) -> const char * {
            if (inline_value) return argv[i] + eq + 1;
            if (i + 1 >= argc) {
                std::fprintf(stderr, "sortapp %s: %s needs a value\n", argv[0], name);
                return nullptr;
            }
            return argv[++i];
        };
        auto forward = [&](const char *v) {
            o.forwarded.push_back(a);
            if (v != nullptr) o.forwarded.push_back(v);
        };
        const char *v = nullptr;
        uint64_t n = 0;
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            *exit_code = 0;
            return false;
        } else if (a == "--json") {
            o.json = true;
            forward(nullptr);
        } else if (a == "--restricted" || a == "--unrestricted") {
            o.restricted = a == "--restricted";
            forward(nullptr);
        } else if ((a == "-n" || a == "--nodes") && is_run) {
            if (!(v = take("--nodes"))) return false;
            char *end = nullptr;
            long k = std::strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || k < 1 || k > 256) {
                std::fprintf(stderr, "sortapp run: --nodes: '%s' is not a number in [1, 256]\n", v);
                return false;
            }
            o.nodes = static_cast<int>(k);
        } else if (a == "--timeout" && is_run) {
            if (!(v = take("--timeout"))) return false;
            o.timeout_s = std::atol(v);
            if (o.timeout_s < 1) {
                std::fprintf(stderr, "sortapp run: --timeout: '%s' is not a positive number\n", v);
                return false;
            }
        } else if (a == "--job-id") {
            if (!(v = take("--job-id"))) return false;
            o.job_id = v;
            bool ok = !o.job_id.empty() && o.job_id.size() <= 32;
            for (char ch : o.job_id)
                ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-');
            if (!ok) {
                std::fprintf(stderr, "sortapp: --job-id: '%s' is not 1-32 letters, digits or '-'\n",
                             v);
                return false;
            }
            forward(v);
        } else if (a == "--same-input") {
            o.same_input = true;
            forward(nullptr);
        } else if (a == "--stall-timeout") {
            if (!(v = take("--stall-timeout"))) return false;
            double d = std::atof(v);
            if (!(d >= 1 && d <= 86400)) {
                std::fprintf(stderr,
                             "sortapp: --stall-timeout: '%s' is not a number of seconds "
                             "in [1, 86400]\n",
                             v);
                return false;
            }
            o.stall_ms = static_cast<int>(d * 1000);
            forward(v);
        } else if (a == "--input" || a == "--output" || a == "--scratch" || a == "--provider" ||
                   a == "--protocol") {
            if (!(v = take(a.c_str()))) return false;
            (a == "--input"      ? o.input
             : a == "--output"   ? o.output
             : a == "--scratch"  ? o.scratch
             : a == "--provider" ? o.provider
                                 : o.protocol) = v;
            if (a == "--protocol" && o.protocol != "rdma" && o.protocol != "sendrecv" &&
                o.protocol != "rdma-write") {
                std::fprintf(stderr,
                             "sortapp: --protocol: '%s' is not sendrecv, rdma or rdma-write\n", v);
                return false;
            }
            forward(v);
        } else if (a == "--memory" || a == "--record-size" || a == "--key-size" || a == "--block") {
            if (!(v = take(a.c_str())) || !size_arg(a, v, n)) return false;
            (a == "--memory"        ? o.params.memory_budget
             : a == "--record-size" ? o.params.record_size
             : a == "--key-size"    ? o.params.key_size
                                    : o.params.block_bytes) = n;
            forward(v);
        } else if (a == "--depth") {
            if (!(v = take("--depth"))) return false;
            long k = std::atol(v);
            if (k < 2 || k > 64) {
                std::fprintf(stderr, "sortapp: --depth: '%s' is not a number in [2, 64]\n", v);
                return false;
            }
            o.params.read_depth = static_cast<uint32_t>(k);
            forward(v);
        } else if (a == "--network-mb-s" || a == "--straggler") {
            if (!(v = take(a.c_str()))) return false;
            double d = std::atof(v);
            if (!(d > 0)) {
                std::fprintf(stderr, "sortapp: %s: '%s' is not a positive number\n", a.c_str(), v);
                return false;
            }
            (a == "--straggler" ? o.straggler : o.network_mb_s) = d;
            forward(v);
        } else {
            std::fprintf(stderr, "sortapp %s: unknown option '%s' (see --help)\n", argv[0],
                         argv[i]);
            return false;
        }
    }
    if (is_run && o.nodes == 0) {
        std::fprintf(stderr, "sortapp run: -n N is required (see --help)\n");
        return false;
    }
    if (o.input.empty() || o.output.empty()) {
        std::fprintf(stderr, "sortapp %s: --input and --output are required (see --help)\n",
                     argv[0]);
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
    *exit_code = 0;
    return true;
}

}  // namespace sortapp::cluster
