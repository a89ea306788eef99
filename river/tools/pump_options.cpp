// The DataPump's command line.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pump.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/sampler.hpp"

namespace pump {

namespace {

const char kDescription[] =
    "datapump --from RANK:INPUT --to RANK:OUTPUT [OPTIONS]\n"
    "datapump --no-disk [--bytes SIZE] [--from RANK --to RANK] [OPTIONS]\n"
    "\n"
    "Copies INPUT on one rank's disk to OUTPUT on another's through a river, with\n"
    "deep asynchronous reads at the source and writes at the sink, and prints the\n"
    "rate (MB/s, 10^6 bytes) and the CPU time per byte at both ends. Run it under\n"
    "msgrun (or any libmsg launcher) on as many ranks as the two ranks need, e.g.\n"
    "\n"
    "  msgrun -n 2 datapump --from 0:/data/in --to 1:/scratch/out\n"
    "\n"
    "The output is written under a temporary name in its directory and renamed\n"
    "into place only when complete; a failed or stopped copy leaves no output. An\n"
    "existing OUTPUT is replaced, unless it is the input itself. The source and\n"
    "the sink are different ranks (two on one host copy from disk to disk there).\n"
    "The sink's rank prints the report.";

// --timeline DIR and --sample-hz HZ: the sink's counters over time.
void add_timeline(CLI::App &app, Options *o) {
    CLI::Option *dir = app.add_option("--timeline", o->timeline,
                                      "the sink's rank samples its own counters through the copy "
                                      "and writes DIR/timeline.jsonl, .csv, .png and .html (DIR is "
                                      "created if absent)")
                           ->type_name("DIR");
    viaduct::cli::add_number(app, "--sample-hz", o->sample_hz,
                             "samples per second for --timeline, 0.1 to 100 (default 10)",
                             viaduct::kMinSampleHz, viaduct::kMaxSampleHz, "samples a second", "HZ")
        ->needs(dir);
}

// "RANK:PATH" (or "RANK" with --no-disk).
bool parse_end(const std::string &text, int *rank, std::string *path) {
    const auto colon = text.find(':');
    const std::string number = text.substr(0, colon);
    auto v = viaduct::cli::size(number, 0, 1 << 20);
    if (!v || number.find_first_not_of("0123456789") != std::string::npos) return false;
    *rank = static_cast<int>(*v);
    *path = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    return true;
}

// --from / --to: "RANK:PATH".
void add_end(CLI::App &app, const std::string &name, int *rank, std::string *path,
             const std::string &description) {
    app.add_option_function<std::string>(
           name,
           [name, rank, path](const std::string &v) {
               if (!parse_end(v, rank, path))
                   throw CLI::ValidationError(name + ": '" + v + "' is not RANK:PATH");
           },
           description)
        ->type_name(name == "--from" ? "RANK:INPUT" : "RANK:OUTPUT");
}

void add_options(CLI::App &app, Options *o) {
    app.description(kDescription);
    add_end(app, "--from", &o->from, &o->input, "the source's rank and file (default rank 0)");
    add_end(app, "--to", &o->to, &o->output, "the sink's rank and file (default rank 1)");
    app.add_flag("--no-disk", o->no_disk,
                 "no files: the source sends --bytes from memory and the sink drops them (the "
                 "river and fabric alone)");
    viaduct::cli::add_size(app, "--bytes", o->bytes, "bytes to send with --no-disk (default 1G)");
    viaduct::cli::add_size(app, "--block", o->block,
                           "bytes per disk read or write request (default 1M)", 1, 1ull << 30);
    app.add_option("--depth", o->depth, "disk reads in flight at the source (default 8)")
        ->check(CLI::Range(1, 1024));
    viaduct::cli::add_size(app, "--batch", o->batch, "river batch size (default 1M)", 1,
                           1ull << 30);
    app.add_option("--credits", o->credits,
                   "batches in flight from source to sink; also the sink's writes in flight "
                   "(default 8)")
        ->check(CLI::Range(1, 1024));
    app.add_flag_function(
        "--direct", [o](std::int64_t) { o->direct = true; },
        "O_DIRECT reads and writes where the file system takes them (less CPU per byte; "
        "default: the page cache, whose read-ahead and write-back copy faster on a disk that "
        "both reads and writes)");
    app.add_flag_function(
        "--no-direct", [o](std::int64_t) { o->direct = false; },
        "through the page cache (the default)");
    app.add_option("--io", o->io, "uring or threads (default: io_uring, else pread/pwrite threads)")
        ->check(CLI::IsMember({"uring", "threads"}))
        ->type_name("KIND");
    add_timeline(app, o);
    app.add_flag("--json", o->json, "one JSON object on standard output instead of text");
    app.footer(viaduct::cli::size_syntax);
}

std::string check(const Options &o) {
    if (o.from == o.to) return "the source and the sink must be different ranks";
    if (o.no_disk) {
        if (!o.input.empty() || !o.output.empty()) return "--no-disk takes ranks, not files";
        return "";
    }
    if (o.input.empty() || o.output.empty())
        return "--from RANK:INPUT and --to RANK:OUTPUT are needed (or --no-disk)";
    return "";
}

}  // namespace

int parse_options(int argc, char **argv, bool speak, Options *o) {
    CLI::App app;
    viaduct::cli::setup(app, "datapump");
    add_options(app, o);
    const int rc = viaduct::cli::parse(app, argc, argv, speak);
    if (rc == 0) return 1;
    if (rc > 0) return 2;
    const std::string problem = check(*o);
    if (problem.empty()) return 0;
    if (speak) viaduct::cli::usage_error("datapump", problem);
    return 2;
}

}  // namespace pump
