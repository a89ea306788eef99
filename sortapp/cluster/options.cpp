// The distributed sort's command line (see options.hpp).
#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "sortapp/record_format.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/sampler.hpp"

namespace sortapp::cluster {

namespace {

const char kDescription[] =
    "sortapp run -n N --input PATTERN --output PATTERN [options]\n"
    "sortapp job --input PATTERN --output PATTERN [options]\n"
    "\n"
    "The distributed sort: N sort processes (a sorting thread and a shadow thread each) and\n"
    "a monitor. Every node sorts its input partition (phases 1 and 2), the monitor finds the\n"
    "exact output partition boundaries across all nodes (phase 3a), and every node pulls its\n"
    "partition from all nodes through libremoteio and merges it (phase 3b). The node-order\n"
    "concatenation of the outputs is sorted and holds exactly the input records.\n"
    "\n"
    "`run` starts the N nodes and the monitor on this machine (through msgrun). `job` is one\n"
    "process of a job started any other way (msgrun, mpirun, srun, the TCP rendezvous):\n"
    "the job's last rank is the monitor, ranks 0..N-1 sort.";

// A word from a short list, checked as CLI11 reads it: "'x' is not a, b or c".
CLI::Validator one_of(std::vector<std::string> words) {
    std::string spoken;
    for (std::size_t k = 0; k < words.size(); ++k)
        spoken += (k == 0 ? "" : k + 1 == words.size() ? " or " : ", ") + words[k];
    auto check = [words, spoken](const std::string &w) -> std::string {
        if (std::find(words.begin(), words.end(), w) != words.end()) return "";
        return "'" + w + "' is not " + spoken;
    };
    return CLI::Validator(check, "");
}

void add_run_options(CLI::App &app, JobOptions &o) {
    app.add_option("-n,--nodes", o.nodes, "(run) sort processes (1..256)")
        ->check(CLI::Range(1, 256));
    app.add_option("--timeout", o.timeout_s,
                   "(run) give up after this long (default 3600): every process gets SIGTERM, "
                   "then SIGKILL after a grace period")
        ->type_name("SECONDS")
        ->check(CLI::PositiveNumber);
    app.add_option("--bind-to", o.bind_to,
                   "(run) core: each process runs on one CPU of its own, round robin (msgrun "
                   "--bind-to core); none (default): on any")
        ->type_name("core|none")
        ->check(one_of({"core", "none"}));
}

void add_file_options(CLI::App &app, JobOptions &o) {
    app.add_option("--input", o.input, "node input files; {rank} becomes the node's rank")
        ->type_name("PATTERN");
    app.add_option("--output", o.output, "node output files")->type_name("PATTERN");
    app.add_option("--scratch", o.scratch,
                   "where a node keeps its runs and work file (default: the output's directory)")
        ->type_name("PATTERN");
    app.add_flag("--same-input", o.same_input,
                 "every node reads the file --input names (no {rank}): on one host that sorts N "
                 "copies of it");
    app.add_option("--job-id", o.job_id,
                   "names the files the job creates (.sortapp-job-ID-RANK in the scratch "
                   "directory); `run` picks a random one")
        ->type_name("ID")
        ->check(
            [](const std::string &id) -> std::string {
                bool ok = !id.empty() && id.size() <= 32;
                for (char ch : id)
                    ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-');
                return ok ? "" : "'" + id + "' is not 1-32 letters, digits or '-'";
            },
            "ID");
}

void add_sort_options(CLI::App &app, JobOptions &o) {
    using viaduct::cli::add_size;
    JobParams &p = o.params;
    add_size(app, "-m,--memory", p.memory_budget,
             "memory budget per node (default: the node's own, from /proc/meminfo and cgroup "
             "limits)");
    add_size(app, "--record-size", p.record_size, "record size (default 100)", 1);
    add_size(app, "--key-size", p.key_size, "key size, the record's first bytes (default 10)", 1);
    add_size(app, "--block", p.block_bytes, "phase 3b remote read size (default 512K)", 1);
    app.add_option("--depth", p.read_depth, "phase 3b reads in flight per source node (default 4)")
        ->check(CLI::Range(2, 64));
    app.add_option_function<std::string>(
           "--algorithm",
           [&p](const std::string &w) { p.algorithm = w == "river" ? kRiver : kThreePhase; },
           "three-phase (default): local sort, exact selection, merge over remote I/O; river: "
           "NOW-Sort's parallel sort, records sent to their node by sampled splitters while "
           "they are read")
        ->type_name("A")
        ->check(one_of({"three-phase", "river"}));
    app.add_option_function<std::string>(
           "--passes",
           [&p](const std::string &w) {
               p.passes = w == "auto" ? 0 : static_cast<uint32_t>(w[0] - '0');
           },
           "(river) auto (default): one pass when a node's share fits its memory, else two; 1 "
           "or 2 to force (1 fails if it does not fit)")
        ->type_name("P")
        ->check(one_of({"auto", "1", "2"}));
}

void add_report_options(CLI::App &app, JobOptions &o) {
    app.add_option("--network-mb-s", o.network_mb_s,
                   "network bandwidth for the expectations (default: measured)")
        ->type_name("MB/S")
        ->check(CLI::PositiveNumber);
    app.add_option("--straggler", o.straggler,
                   "name nodes slower than the median by this much (default 1.25)")
        ->type_name("FACTOR")
        ->check(CLI::PositiveNumber);
    app.add_option_function<double>(
           "--stall-timeout", [&o](double d) { o.stall_ms = static_cast<int>(d * 1000); },
           "a node or monitor that answers nothing for this long is declared stopped and the "
           "job fails (default 30)")
        ->type_name("SECONDS")
        ->check(CLI::Range(1.0, 86400.0));
    app.add_flag_function(
        "--remeasure", [&o](std::int64_t) { o.params.remeasure = 1; },
        "measure every scratch disk again, not the cached figures");
    app.add_flag("--json", o.json, "print the report as one JSON object");
    app.add_flag("--watch", o.watch,
                 "on a terminal, a line per node redrawn 5 times a second: phase, percent done, "
                 "cpubar, diskbar and network MB/s; without one, a progress line every 5 s");
    viaduct::cli::add_number(app, "--sample-hz", o.sample_hz,
                             "every node samples its counters this many times a second, 0.1 to "
                             "100 (default 10)",
                             viaduct::kMinSampleHz, viaduct::kMaxSampleHz, "samples a second",
                             "HZ");
    app.add_option("--timeline", o.timeline,
                   "write the job's timeline into DIR: timeline.jsonl, .csv, .png and .html "
                   "(made if absent; also after a failed job, with what arrived)")
        ->type_name("DIR");
}

void add_fabric_options(CLI::App &app, JobOptions &o) {
    app.add_option("--transport", o.transport,
                   "libmsg transport: auto | shm | ofi | verbs (VIADUCT_TRANSPORT); libmsg's "
                   "default, auto, opens shm when every process runs on one host (as `run`'s "
                   "do) and no provider is named, else ofi")
        ->type_name("T")
        ->check(one_of({"auto", "shm", "ofi", "verbs"}));
    app.add_option("--provider", o.provider,
                   "libfabric provider (VIADUCT_PROVIDER); auto then opens ofi")
        ->type_name("NAME");
    app.add_option("--protocol", o.protocol,
                   "long-message protocol: auto (libmsg's default: by message size) | sendrecv | "
                   "rdma | rdma-write (VIADUCT_PROTOCOL)")
        ->type_name("P")
        // libmsg's names (msg_protocol_name), spelled out: sortapp run links no libmsg.
        ->check(one_of({"auto", "sendrecv", "rdma", "rdma-write"}));
    app.add_flag_function(
        "--restricted", [&o](std::int64_t) { o.restricted = 1; },
        "one long message at a time (VIADUCT_RESTRICTED=1)");
    app.add_flag_function(
        "--unrestricted", [&o](std::int64_t) { o.restricted = 0; },
        "any number at once (VIADUCT_RESTRICTED=0)");
}

// Every option given but run's own, as `--name=value` (or `--flag`), for the job processes.
std::vector<std::string> forwarded_options(const CLI::App &app) {
    std::vector<std::string> out;
    for (const CLI::Option *opt : app.get_options()) {
        const std::string name = opt->get_name();
        if (opt->count() == 0 || name == "--nodes" || name == "--timeout" || name == "--bind-to")
            continue;
        if (opt->get_type_size() == 0) {
            for (std::size_t k = 0; k < opt->count(); ++k) out.push_back(name);
        } else {
            out.push_back(name + "=" + opt->results().back());
        }
    }
    return out;
}

// What every command line needs, once all its options are read.
bool complete(const JobOptions &o, bool is_run, const char *command) {
    if (is_run && o.nodes == 0) {
        viaduct::cli::usage_error("sortapp run", "-n N is required");
        return false;
    }
    if (o.input.empty() || o.output.empty()) {
        viaduct::cli::usage_error(std::string("sortapp ") + command,
                                  "--input and --output are required");
        return false;
    }
    RecordFormat f{static_cast<size_t>(o.params.record_size),
                   static_cast<size_t>(o.params.key_size)};
    Status s = f.validate();
    if (!s) {
        viaduct::cli::usage_error(std::string("sortapp ") + command, s.message());
        return false;
    }
    if (o.params.block_bytes < o.params.record_size || o.params.block_bytes > (64u << 20)) {
        viaduct::cli::usage_error(std::string("sortapp ") + command,
                                  "--block must hold a record and be at most 64M");
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
    const std::string command = argv[0];
    CLI::App app;
    viaduct::cli::setup(app, "sortapp " + command);
    app.description(kDescription);
    if (is_run) add_run_options(app, o);
    if (!is_run)
        app.add_option("--launched-at-us", o.launched_us,
                       "when `sortapp run` started, in microseconds since the epoch (run sets "
                       "it): the report's start-up figures count from it")
            ->type_name("US")
            ->check(CLI::NonNegativeNumber);
    add_file_options(app, o);
    add_sort_options(app, o);
    add_report_options(app, o);
    add_fabric_options(app, o);
    app.footer(viaduct::cli::size_syntax);
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) {
        *exit_code = rc;
        return false;
    }
    *exit_code = viaduct::cli::exit_usage;
    if (!complete(o, is_run, command.c_str())) return false;
    o.forwarded = forwarded_options(app);
    *exit_code = 0;
    return true;
}

}  // namespace sortapp::cluster
