// The DataPump (the NT cluster paper's §2): a file from one rank's disk to
// another's through a river, with deep asynchronous reads and writes. What
// its parts share: the command line, the messages around the river, the
// figures each end reports.
#pragma once

#include <msg/msg.h>
#include <river/river.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace pump {

struct Options {
    int from = 0, to = 1;  // ranks
    std::string input, output;
    bool no_disk = false;
    uint64_t bytes = uint64_t{1} << 30;  // --no-disk
    size_t block = size_t{1} << 20;      // bytes per disk request
    int depth = 8;                       // disk requests in flight
    size_t batch = size_t{1} << 20;      // river batch size
    int credits = 8;
    bool direct = false;      // O_DIRECT (--direct); the page cache by default
    std::string io = "auto";  // "auto", "uring" or "threads"
    bool json = false;
    std::string timeline;   // --timeline DIR: the sink writes its timeline there
    double sample_hz = 10;  // --sample-hz
};

// 0: run; 1: done, exit 0 (help, version); 2: usage error (printed when `speak`).
int parse_options(int argc, char **argv, bool speak, Options *o);

// Application tags on the job's context, below the river's.
constexpr int kTagHello = 1;    // source -> sink: Meta
constexpr int kTagVerdict = 2;  // sink -> source: Verdict
constexpr int kTagFigures = 3;  // source -> sink: Figures

// What the sink must know about the input before anything moves.
struct Meta {
    uint64_t magic;
    int32_t status;  // 0, or the source could not start (message says why)
    uint32_t mode;   // the input's permission bits
    uint64_t size, dev, ino;
    char boot_id[48];  // with dev and ino: the same file on the same host
    char message[200];
};
struct Verdict {
    int32_t status;  // 0: go on
    char message[200];
};

// One end's figures.
struct Figures {
    uint64_t bytes = 0;
    double seconds = 0, cpu_seconds = 0;
    char io[16] = "";  // "io_uring", "threads" or "none"
    int direct = 0;
    river_stats_t river{};
};

constexpr uint64_t kMetaMagic = 0x44415441'50554d50ull;  // "DATAPUMP"

// Where the sink is in its steps (an index into sink_phases()) and the bytes it has written
// (or, with --no-disk, dropped) so far: read by the counter sampler's thread.
struct SinkProgress {
    std::atomic<uint32_t> phase{0};
    std::atomic<uint64_t> bytes{0};
};

// The two ends. Each returns 0 on success, else prints why (prefixed
// "datapump: ") and returns 1. The sink fills both ends' figures and keeps
// `progress` (may be null) up to date.
int run_source(msg_context_t *ctx, const Options &o, Figures *mine);
int run_sink(msg_context_t *ctx, const Options &o, Figures *sink, Figures *source,
             SinkProgress *progress);

// The river both ends open: 1-byte records, all to the one sink.
river_options_t river_options(const Options &o, const int *from, const int *to);

void print_report(const Options &o, const Figures &source, const Figures &sink,
                  const msg_info_t &info);
// The report's text (what print_report prints without --json).
std::string report_text(const Options &o, const Figures &source, const Figures &sink,
                        const msg_info_t &info);

// This host's boot id ("" if unknown).
std::string boot_id();
// CPU seconds (user + system) this process has used.
double cpu_seconds();
// Prints "datapump: <why>" to stderr; returns 1 (the exit status).
int fail(const std::string &why);
// fail() with "<what>: <the river's error>: <its text>".
int river_failed(river_t *r, int rc, const char *what);

// The alignment of O_DIRECT buffers, offsets and lengths.
inline constexpr size_t kDirectAlign = 4096;

}  // namespace pump
