// sortapp: the sort's command line. `sortapp local INPUT OUTPUT` sorts one file on this node.
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "cli.hpp"
#include "job.hpp"
#include "probe.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/expectation.hpp"
#include "sortapp/local_sort.hpp"
#include "sortapp/memory_budget.hpp"
#include "sortapp/test_hold.hpp"
#include "viaduct/path.hpp"

using namespace sortapp;

static const char usage[] =
    "usage: sortapp local [options] INPUT OUTPUT\n"
    "  Sorts the fixed-width records of INPUT into OUTPUT (one pass when INPUT fits the memory\n"
    "  budget, else sorted runs in the scratch directory and a merge).\n"
    "  --memory SIZE          memory budget (default: available memory and cgroup limit, less\n"
    "                         a margin); suffixes K, M, G\n"
    "  --scratch DIR          directory for runs (default: the output's directory)\n"
    "  --record-size N        bytes per record (default 100)\n"
    "  --key-size N           key bytes (default 10)\n"
    "  --io-size SIZE         bytes per read/write request (default 2M)\n"
    "  --io-depth N           requests outstanding per stream (default 15)\n"
    "  --merge-buffer SIZE    size of each prefetch buffer of a run in the merge (default 1280K)\n"
    "  --merge-depth N        prefetch buffers per run (default 4; at least 2)\n"
    "  --min-merge-buffer SIZE  smallest prefetch before merging in more passes (default 128K)\n"
    "  --threads N            sorting threads (default 2)\n"
    "  --no-direct            buffered I/O instead of O_DIRECT\n"
    "  --disk-read MB/S --disk-write MB/S   disk bandwidth for the expectations (skips the\n"
    "                         measurement)\n"
    "  --no-measure           no disk measurement and no expectations\n"
    "  --remeasure            measure the disk again instead of using the cached figures\n"
    "  --probe-size SIZE      bytes the disk measurement writes and reads (default 256M)\n"
    "  --disk-cache PATH      where measured figures are kept (default\n"
    "                         ~/.cache/viaduct/sortapp-disk.json)\n"
    "  --json                 print the plan and the phase reports as one JSON object\n"
    "  --no-progress          no progress bar (it is drawn only on a terminal anyway)\n";

namespace {

// sortapp local's command line.
struct LocalArgs {
    SortOptions o;
    bool json = false, progress = true, measure = true;
    double disk_read = 0, disk_write = 0;
    DiskProbeOptions probe;
    std::string scratch;
    std::vector<std::string> args;
};

// Reads the options; -1 when the sort goes on, else the exit status (0 after --help).
int parse_local(const std::string &tool, int argc, char **argv, LocalArgs &a) {
    a.probe.cache_path = default_disk_cache_path();
    for (int i = 0; i < argc; ++i) {
        std::string arg = argv[i], v;
        if (arg == "-h" || arg == "--help") {
            std::fputs(usage, stdout);
            return 0;
        } else if (cli::format_option(tool, argc, argv, i, a.o.format)) {
        } else if (cli::option(tool, argc, argv, i, "--memory", v)) {
            a.o.memory_budget = cli::size_value(tool, "--memory", v);
        } else if (cli::option(tool, argc, argv, i, "--scratch", v)) {
            a.scratch = v;
        } else if (cli::option(tool, argc, argv, i, "--io-size", v)) {
            a.o.io_size = std::size_t(cli::size_value(tool, "--io-size", v));
        } else if (cli::option(tool, argc, argv, i, "--io-depth", v)) {
            a.o.io_depth = unsigned(cli::size_value(tool, "--io-depth", v));
        } else if (cli::option(tool, argc, argv, i, "--merge-buffer", v)) {
            a.o.merge_buffer = std::size_t(cli::size_value(tool, "--merge-buffer", v));
        } else if (cli::option(tool, argc, argv, i, "--merge-depth", v)) {
            a.o.merge_depth = unsigned(cli::size_value(tool, "--merge-depth", v));
            if (a.o.merge_depth < 2) cli::fail(tool, "--merge-depth must be at least 2");
        } else if (cli::option(tool, argc, argv, i, "--min-merge-buffer", v)) {
            a.o.min_merge_buffer = std::size_t(cli::size_value(tool, "--min-merge-buffer", v));
        } else if (cli::option(tool, argc, argv, i, "--threads", v)) {
            a.o.threads = unsigned(cli::size_value(tool, "--threads", v));
        } else if (cli::option(tool, argc, argv, i, "--disk-read", v)) {
            a.disk_read = std::atof(v.c_str());
        } else if (cli::option(tool, argc, argv, i, "--disk-write", v)) {
            a.disk_write = std::atof(v.c_str());
        } else if (cli::option(tool, argc, argv, i, "--probe-size", v)) {
            a.probe.bytes = cli::size_value(tool, "--probe-size", v);
        } else if (cli::option(tool, argc, argv, i, "--disk-cache", v)) {
            a.probe.cache_path = v;
        } else if (arg == "--no-direct") {
            a.o.direct_io = false;
        } else if (arg == "--no-measure") {
            a.measure = false;
        } else if (arg == "--remeasure") {
            a.probe.remeasure = true;
        } else if (arg == "--json") {
            a.json = true;
        } else if (arg == "--no-progress") {
            a.progress = false;
        } else if (arg.size() > 1 && arg[0] == '-') {
            cli::fail(tool, "unknown option " + arg + "\n" + usage);
        } else {
            a.args.push_back(arg);
        }
    }
    return -1;
}

// The scratch disk's bandwidth: given, measured (or cached), or left unknown.
DiskBandwidth disk_figures(const std::string &tool, LocalArgs &a) {
    DiskBandwidth disk;
    if (a.disk_read > 0 && a.disk_write > 0) {
        disk.read_mb_s = a.disk_read;
        disk.write_mb_s = a.disk_write;
    } else if (a.measure) {
        a.probe.dir = a.scratch;
        a.probe.io_size = a.o.io_size;
        a.probe.io_depth = a.o.io_depth;
        Status s = probe_disk(a.probe, disk);
        if (!s) cli::fail(tool, "measuring the scratch disk: " + s.message());
    }
    return disk;
}

// NOW-Sort's expectation: every pass reads and writes all the data once, run formation in
// turns, each merge pass at once (the model of expectation.hpp, as the phase reports use).
void print_expectation(FILE *text, const SortOptions &o, const DiskBandwidth &disk,
                       const std::string &input) {
    struct stat st {};
    MemoryPlan plan;
    if (disk.read_mb_s > 0 && ::stat(input.c_str(), &st) == 0 &&
        std::uint64_t(st.st_size) % o.format.record_size == 0 &&
        plan_memory(o, std::uint64_t(st.st_size) / o.format.record_size, plan)) {
        const auto bytes = std::uint64_t(st.st_size);
        PhaseVolume once;
        once.read = once.write = bytes;
        const double pass = expected_seconds(once, disk.rates());
        if (plan.one_pass) {
            std::fprintf(text, "expected: one-pass %.2f s\n", pass);
        } else {
            std::uint64_t records = std::uint64_t(st.st_size) / o.format.record_size;
            std::size_t runs = std::size_t((records + plan.run_records - 1) / plan.run_records);
            MergePlan merge = plan_merge(o, plan, runs);
            PhaseVolume merging;
            merging.read = merging.write = bytes * merge.passes;
            merging.read_write_overlap = true;
            const double phase2 = expected_seconds(merging, disk.rates());
            std::fprintf(text,
                         "expected: phase 1 %.2f s (%zu runs), phase 2 %.2f s (%u merge pass%s, "
                         "fan-in %zu), total %.2f s\n",
                         pass, runs, phase2, merge.passes, merge.passes == 1 ? "" : "es",
                         merge.fan_in, pass + phase2);
        }
        std::fflush(text);
    }
}

void print_result(const SortOptions &o, const DiskBandwidth &disk, const LocalSortResult &result,
                  bool json) {
    double total = 0, expected = 0;
    for (const PhaseReport &r : result.phases) total += r.seconds, expected += r.expected_seconds;
    if (json) {
        std::printf(
            "{\"records\": %llu, \"record_size\": %zu, \"key_size\": %zu, "
            "\"memory_budget\": %llu, \"one_pass\": %s, \"runs\": %zu, "
            "\"run_records\": %llu, \"merge_passes\": %u, \"merge_fan_in\": %zu, "
            "\"disk_read_mb_s\": %.1f, \"disk_write_mb_s\": %.1f, \"seconds\": %.3f, "
            "\"expected_seconds\": %.3f, \"phases\": [",
            static_cast<unsigned long long>(result.records), o.format.record_size,
            o.format.key_size, static_cast<unsigned long long>(o.memory_budget),
            result.one_pass ? "true" : "false", result.runs,
            static_cast<unsigned long long>(result.memory.run_records), result.merge_passes,
            result.merge.fan_in, disk.read_mb_s, disk.write_mb_s, total, expected);
        for (std::size_t i = 0; i < result.phases.size(); ++i) {
            std::printf("%s%s", i ? ", " : "", result.phases[i].to_json().c_str());
        }
        std::printf("]}\n");
    } else {
        std::printf("total     %8.2f s", total);
        if (expected > 0)
            std::printf("  expected %.2f s  actual/expected %.2f", expected, total / expected);
        std::printf("\n");
    }
}

int run_local(int argc, char **argv) {
    const std::string tool = "sortapp local";
    cleanup::install_signal_cleanup([] { return std::string("sortapp local"); });
    LocalArgs a;
    if (int rc = parse_local(tool, argc, argv, a); rc >= 0) return rc;
    SortOptions &o = a.o;
    const bool json = a.json;
    if (a.args.size() != 2) cli::fail(tool, std::string("expected INPUT and OUTPUT\n") + usage);
    const std::string &input = a.args[0], &output = a.args[1];
    if (a.scratch.empty()) {
        a.scratch = viaduct::path_dir(output);
    }
    o.scratch_dir = a.scratch;
    MemoryFigures mem;
    if (o.memory_budget == 0) {
        mem = default_memory_budget();
        o.memory_budget = mem.budget;
    }
    Status s = o.format.validate();
    if (!s) cli::fail(tool, s.message());
    DiskBandwidth disk = disk_figures(tool, a);

    // Expectations first (NOW-Sort: each phase reads and writes everything once).
    FILE *text = json ? stderr : stdout;
    if (!json) {
        std::fprintf(text, "sortapp local: %s -> %s, %s\n", input.c_str(), output.c_str(),
                     o.format.describe().c_str());
        std::fprintf(
            text, "memory budget: %.1f MiB%s\n", o.memory_budget / 1048576.0,
            mem.available ? " (from /proc/meminfo and the cgroup limit, less a margin)" : "");
        if (disk.read_mb_s > 0) {
            std::fprintf(
                text, "scratch disk: read %.0f MB/s, write %.0f MB/s (%s)\n", disk.read_mb_s,
                disk.write_mb_s,
                disk.cached ? "cached measurement" : (a.disk_read > 0 ? "given" : "measured now"));
        }
    }
    ProgressBar bar(a.progress && ::isatty(2));
    std::string last_phase;
    o.progress = [&bar, &last_phase](const char *phase, std::uint64_t done, std::uint64_t total) {
        if (last_phase != phase) test_hold("sortapp local", last_phase = phase);
        bar.update(phase, done, total);
    };
    LocalSortResult result;
    if (!json) print_expectation(text, o, disk, input);
    auto on_phase = [&](const PhaseReport &r) {
        bar.finish();
        if (!json) std::fprintf(text, "%s\n", r.to_text().c_str());
        std::fflush(text);
    };
    s = local_sort(o, input, output, disk, result, on_phase);
    bar.finish();
    if (!s) cli::fail("sortapp local", s.message());
    cleanup::untrack(output);  // sorted and in place: kept from here on
    print_result(o, disk, result, json);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    // A file size limit then fails the write with EFBIG, reported like any write error,
    // instead of killing the process before it can remove its temporary files.
    std::signal(SIGXFSZ, SIG_IGN);
    if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
        std::fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? cli::exit_error : 0;
    }
    std::string command = argv[1];
    try {
        if (command == "local") return run_local(argc - 2, argv + 2);
    } catch (const std::bad_alloc &) {
        cleanup::abort_process(cli::exit_error,
                               "sortapp local: out of memory (a smaller --memory budget, or a "
                               "larger address-space limit, is needed)");
    }
    if (command == "run") return sortapp::cluster::run_main(argc - 1, argv + 1);
    if (command == "job") return sortapp::cluster::job_main(argc - 1, argv + 1);
    if (command == "probe") return sortapp::probe_main(argc - 1, argv + 1);
    cli::fail("sortapp", "unknown command '" + command + "' (commands: local, run, job, probe)");
}
