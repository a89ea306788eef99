// sortapp: the sort's command line. `sortapp local INPUT OUTPUT` sorts one file on this node.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "job.hpp"
#include "local_timeline.hpp"
#include "probe.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/expectation.hpp"
#include "sortapp/local_sort.hpp"
#include "sortapp/memory_budget.hpp"
#include "sortapp/test_hold.hpp"
#include "viaduct/fatal.hpp"
#include "viaduct/path.hpp"

using namespace sortapp;

namespace {

// sortapp local's command line.
struct LocalArgs {
    SortOptions o;
    bool json = false, progress = true, measure = true;
    double disk_read = 0, disk_write = 0;
    DiskProbeOptions probe;
    std::string scratch;
    std::string input, output;
    local_timeline::Args timeline;
};

void add_local_io_options(CLI::App &app, LocalArgs &a) {
    using viaduct::cli::add_size;
    add_size(app, "--io-size", a.o.io_size, "bytes per read/write request (default 2M)", 1);
    app.add_option("--io-depth", a.o.io_depth, "requests outstanding per stream (default 15)")
        ->check(CLI::Range(1u, 4096u));
    add_size(app, "--merge-buffer", a.o.merge_buffer,
             "size of each prefetch buffer of a run in the merge (default 1280K)", 1);
    app.add_option("--merge-depth", a.o.merge_depth, "prefetch buffers per run (default 4)")
        ->check(CLI::Range(2u, 4096u));
    add_size(app, "--min-merge-buffer", a.o.min_merge_buffer,
             "smallest prefetch before merging in more passes (default 128K)", 1);
    app.add_option("--threads", a.o.threads, "sorting threads (default 2)")
        ->check(CLI::Range(1u, 1024u));
    app.add_flag_function(
        "--no-direct", [&a](std::int64_t) { a.o.direct_io = false; },
        "buffered I/O instead of O_DIRECT");
    app.add_flag_function(
        "--no-space-check", [&a](std::int64_t) { a.o.check_space = false; },
        "start even when the runs and the output seem not to fit the free space (for file "
        "systems whose free space statvfs does not tell)");
}

void add_local_disk_options(CLI::App &app, LocalArgs &a) {
    app.add_option("--disk-read", a.disk_read,
                   "disk read bandwidth for the expectations, with --disk-write (skips the "
                   "measurement)")
        ->type_name("MB/S")
        ->check(CLI::PositiveNumber);
    app.add_option("--disk-write", a.disk_write, "disk write bandwidth for the expectations")
        ->type_name("MB/S")
        ->check(CLI::PositiveNumber);
    app.add_flag_function(
        "--no-measure", [&a](std::int64_t) { a.measure = false; },
        "no disk measurement and no expectations");
    app.add_flag("--remeasure", a.probe.remeasure,
                 "measure the disk again instead of using the cached figures");
    viaduct::cli::add_size(app, "--probe-size", a.probe.bytes,
                           "bytes the disk measurement writes and reads (default 256M)", 1);
    app.add_option("--disk-cache", a.probe.cache_path,
                   "where measured figures are kept (default ~/.cache/viaduct/sortapp-disk.json)")
        ->type_name("PATH");
}

const char kLocalDescription[] =
    "Sorts the fixed-width records of INPUT into OUTPUT (one pass when INPUT fits the memory\n"
    "budget, else sorted runs in the scratch directory and a merge).";

// Reads the options; -1 when the sort goes on, else the exit status (0 after --help).
int parse_local(int argc, char **argv, LocalArgs &a) {
    a.probe.cache_path = default_disk_cache_path();
    CLI::App app;
    viaduct::cli::setup(app, "sortapp local");
    app.description(kLocalDescription);
    app.add_option("INPUT", a.input, "the records to sort")->required();
    app.add_option("OUTPUT", a.output, "the sorted file")->required();
    viaduct::cli::add_size(app, "-m,--memory", a.o.memory_budget,
                           "memory budget (default: available memory and cgroup limit, less a "
                           "margin)");
    app.add_option("--scratch", a.scratch, "directory for runs (default: the output's directory)")
        ->type_name("DIR");
    cli::add_format_options(app, a.o.format);
    add_local_io_options(app, a);
    add_local_disk_options(app, a);
    local_timeline::add_options(app, a.timeline);
    app.add_flag("--json", a.json, "print the plan and the phase reports as one JSON object");
    app.add_flag_function(
        "--no-progress", [&a](std::int64_t) { a.progress = false; },
        "no progress bar (it is drawn only on a terminal anyway)");
    app.footer(viaduct::cli::size_syntax);
    return viaduct::cli::parse(app, argc, argv);
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
        const double pass = expected_seconds(formation_volume(bytes, 0), disk.rates());
        if (plan.one_pass) {
            std::fprintf(text, "expected: one-pass %.2f s\n", pass);
        } else {
            std::uint64_t records = std::uint64_t(st.st_size) / o.format.record_size;
            std::size_t runs = std::size_t((records + plan.run_records - 1) / plan.run_records);
            MergePlan merge = plan_merge(o, plan, runs);
            // The run kept in memory (a full one) is neither written nor read back.
            const std::uint64_t kept =
                plan.keep_last_run ? plan.run_records * o.format.record_size : 0;
            const double phase1 = expected_seconds(formation_volume(bytes, kept), disk.rates());
            const double phase2 =
                expected_seconds(merge_volume(bytes, merge.passes, kept), disk.rates());
            std::fprintf(text,
                         "expected: phase 1 %.2f s (%zu runs%s), phase 2 %.2f s (%u merge pass%s, "
                         "fan-in %zu), total %.2f s\n",
                         phase1, runs, kept ? ", the last kept in memory" : "", phase2,
                         merge.passes, merge.passes == 1 ? "" : "es", merge.fan_in,
                         phase1 + phase2);
        }
        std::fflush(text);
    }
}

// CPU-seconds (user + system, every phase) per GB (10^9 bytes) of input; 0 for no input.
double cpu_per_gb(const SortOptions &o, const LocalSortResult &result) {
    double cpu = 0;
    for (const PhaseReport &r : result.phases) cpu += r.cpu_seconds;
    const double gb = static_cast<double>(result.records) * o.format.record_size / 1e9;
    return gb > 0 ? cpu / gb : 0;
}

// "total 12.34 s  1.23 CPU-s/GB  expected ...": the whole sort against its expectation.
std::string total_line(const SortOptions &o, const LocalSortResult &result) {
    double total = 0, expected = 0;
    for (const PhaseReport &r : result.phases) total += r.seconds, expected += r.expected_seconds;
    char line[200];
    int n = std::snprintf(line, sizeof line, "total     %8.2f s  %.2f CPU-s/GB", total,
                          cpu_per_gb(o, result));
    if (expected > 0)
        std::snprintf(line + n, sizeof line - n, "  expected %.2f s  actual/expected %.2f",
                      expected, total / expected);
    return line;
}

void print_result(const SortOptions &o, const DiskBandwidth &disk, const LocalSortResult &result,
                  bool json, const std::vector<std::string> &timeline) {
    double total = 0, expected = 0;
    for (const PhaseReport &r : result.phases) total += r.seconds, expected += r.expected_seconds;
    if (json) {
        nlohmann::ordered_json phases = nlohmann::ordered_json::array();
        for (const PhaseReport &r : result.phases)
            phases.push_back(nlohmann::ordered_json::parse(r.to_json()));
        nlohmann::ordered_json doc = {{"records", result.records},
                                      {"record_size", o.format.record_size},
                                      {"key_size", o.format.key_size},
                                      {"memory_budget", o.memory_budget},
                                      {"one_pass", result.one_pass},
                                      {"runs", result.runs},
                                      {"kept_in_memory_records", result.kept_records},
                                      {"run_records", result.memory.run_records},
                                      {"merge_passes", result.merge_passes},
                                      {"merge_fan_in", result.merge.fan_in},
                                      {"disk_read_mb_s", disk.read_mb_s},
                                      {"disk_write_mb_s", disk.write_mb_s},
                                      {"seconds", total},
                                      {"cpu_seconds_per_gb", cpu_per_gb(o, result)},
                                      {"expected_seconds", expected},
                                      {"phases", phases}};
        if (!timeline.empty()) doc["timeline"] = timeline;
        std::printf("%s\n", cli::dump(doc).c_str());
    } else {
        std::printf("%s\n", total_line(o, result).c_str());
    }
}

// What the sort is about to do: the files, the memory budget, the scratch disk's figures.
void print_plan(FILE *text, const LocalArgs &a, const MemoryFigures &mem,
                const DiskBandwidth &disk) {
    std::fprintf(text, "sortapp local: %s -> %s, %s\n", a.input.c_str(), a.output.c_str(),
                 a.o.format.describe().c_str());
    std::fprintf(text, "memory budget: %.1f MiB%s\n", a.o.memory_budget / 1048576.0,
                 mem.available ? " (from /proc/meminfo and the cgroup limit, less a margin)" : "");
    if (disk.read_mb_s > 0) {
        std::fprintf(text, "scratch disk: read %.0f MB/s, write %.0f MB/s (%s)\n", disk.read_mb_s,
                     disk.write_mb_s,
                     disk.marked_stale
                         ? "cached measurement, marked stale: sortapp probe measures it again"
                     : disk.cached ? "cached measurement"
                                   : (a.disk_read > 0 ? "given" : "measured now"));
    }
}

// The timeline's title: "sortapp local: 200000 records of 100 B, two-pass (8 runs), 20.0 MB".
std::string timeline_title(const LocalArgs &a, const LocalSortResult &result, bool failed) {
    const bool one_pass = result.one_pass || result.memory.one_pass || result.records == 0;
    char title[200];
    std::snprintf(title, sizeof title, "sortapp local: %llu records of %zu B, %s",
                  static_cast<unsigned long long>(result.records), a.o.format.record_size,
                  one_pass ? "one-pass" : "two-pass");
    std::string t = title;
    if (result.runs > 0) t += " (" + std::to_string(result.runs) + " runs)";
    std::snprintf(title, sizeof title, ", %.1f MB",
                  double(result.records) * double(a.o.format.record_size) / 1e6);
    return t + title + (failed ? ", failed" : "");
}

// The sort as it ran: its sampler, its progress and the text of its phase reports.
struct LocalRun {
    LocalSortProgress done;
    std::optional<local_timeline::Recorder> recorder;
    std::string report;
    std::vector<std::string> timeline;  // the files written
    std::string timeline_error;
};

// Ends the sampling and writes the timeline, when there is one and the sort got as far as
// its first phase (a sort its checks refused has nothing to show). The sorted output, already
// in place after a success, is not touched whatever happens here.
void finish_timeline(const LocalArgs &a, const LocalSortResult &result, const Status &s,
                     LocalRun &run) {
    if (!run.recorder || (!s && run.done.phase() == 0)) return;
    std::string report =
        run.report + (s ? total_line(a.o, result) : "failed: " + s.message()) + "\n";
    try {
        run.timeline = run.recorder->finish(timeline_title(a, result, !s), std::move(report));
    } catch (const std::runtime_error &e) {
        run.timeline_error = e.what();
        return;
    }
    if (!a.json)
        std::fprintf(stderr, "sortapp local: timeline in %s (timeline.jsonl, .csv, .png, .html)\n",
                     a.timeline.dir.c_str());
}

int run_local(int argc, char **argv) {
    const std::string tool = "sortapp local";
    cleanup::install_signal_cleanup([] { return std::string("sortapp local"); });
    LocalArgs a;
    if (int rc = parse_local(argc, argv, a); rc >= 0) return rc;
    SortOptions &o = a.o;
    const bool json = a.json;
    const std::string &input = a.input, &output = a.output;
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
    if (!s) cli::usage_fail(tool, s.message());
    if (!a.timeline.dir.empty()) {
        const std::string why = viaduct::timeline::refusal(a.timeline.dir);
        if (!why.empty()) cli::fail(tool, "not writing the timeline there: " + why);
    }
    DiskBandwidth disk = disk_figures(tool, a);

    // Expectations first (NOW-Sort: each phase reads and writes everything once).
    FILE *text = json ? stderr : stdout;
    if (!json) print_plan(text, a, mem, disk);
    LocalRun run{LocalSortProgress(o.format.record_size), {}, {}, {}, {}};
    if (!a.timeline.dir.empty())
        run.recorder.emplace(a.timeline, local_timeline::data_device(output, a.scratch), run.done);
    ProgressBar bar(a.progress && ::isatty(2));
    std::string last_phase;
    o.progress = [&](const char *phase, std::uint64_t done, std::uint64_t total) {
        if (last_phase != phase) test_hold("sortapp local", last_phase = phase);
        run.done.progress(phase, done, total);
        bar.update(phase, done, total);
    };
    LocalSortResult result;
    if (!json) print_expectation(text, o, disk, input);
    auto on_phase = [&](const PhaseReport &r) {
        run.done.phase_ended(r);
        run.report += r.to_text() + "\n";
        bar.finish();
        if (!json) std::fprintf(text, "%s\n", r.to_text().c_str());
        std::fflush(text);
    };
    if (run.recorder) run.recorder->start();
    s = local_sort(o, input, output, disk, result, on_phase);
    bar.finish();
    if (s) cleanup::untrack(output);  // sorted and in place: kept from here on
    finish_timeline(a, result, s, run);
    const std::string timeline_failed =
        run.timeline_error.empty() ? "" : "the timeline was not written: " + run.timeline_error;
    if (!s) cli::fail(tool, s.message() + (timeline_failed.empty() ? "" : "; " + timeline_failed));
    print_result(o, disk, result, json, run.timeline);
    if (!timeline_failed.empty())
        cli::fail(tool, "sorted into " + output + ", but " + timeline_failed);
    return 0;
}

// The commands; each reads its own options (sortapp COMMAND --help).
const std::pair<const char *, const char *> kCommands[] = {
    {"local", "sort one file on this node"},
    {"run", "start a distributed sort on this machine (N nodes and a monitor, under msgrun)"},
    {"job", "one process of a distributed sort started any other way (msgrun, mpirun, srun)"},
    {"probe", "measure the scratch disk the way the sort uses it, and cache the figures"},
};

// sortapp's own words before the command: --help lists the commands, --version; returns
// -1 and the command's index in argv to go on, else the exit status.
int parse_command(int argc, char **argv, int &command_at) {
    CLI::App app;
    viaduct::cli::setup(app, "sortapp");
    app.description(
        "The sort: one file on this node, or a distributed sort over many.\n"
        "`sortapp COMMAND --help` lists a command's options.");
    for (const auto &[name, what] : kCommands) {
        // The command's words are its own: parsed by it, help included.
        CLI::App *sub = app.add_subcommand(name, what);
        sub->set_help_flag();
        sub->prefix_command();
    }
    app.require_subcommand(1);
    auto known = [argv](const auto &c) { return std::string(c.first) == argv[1]; };
    if (argc > 1 && argv[1][0] != '-' &&
        std::none_of(std::begin(kCommands), std::end(kCommands), known)) {
        viaduct::cli::usage_error("sortapp", std::string("unknown command '") + argv[1] +
                                                 "' (commands: local, run, job, probe)");
        return viaduct::cli::exit_usage;
    }
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    const CLI::App *chosen = app.get_subcommands().front();
    command_at = argc - static_cast<int>(chosen->remaining().size()) - 1;
    return -1;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler(
        "sortapp", [](const std::string &m) { cleanup::abort_process(cli::exit_error, m); });
    // A file size limit then fails the write with EFBIG, reported like any write error,
    // instead of killing the process before it can remove its temporary files.
    std::signal(SIGXFSZ, SIG_IGN);
    int at = 0;
    if (int rc = parse_command(argc, argv, at); rc >= 0) return rc;
    const std::string command = argv[at];
    try {
        if (command == "local") return run_local(argc - at, argv + at);
    } catch (const std::bad_alloc &) {
        cleanup::abort_process(cli::exit_error,
                               "sortapp local: out of memory (a smaller --memory budget, or a "
                               "larger address-space limit, is needed)");
    }
    if (command == "run") return sortapp::cluster::run_main(argc - at, argv + at);
    if (command == "probe") return sortapp::probe_main(argc - at, argv + at);
    return sortapp::cluster::exec_job(argc - at, argv + at);
}
