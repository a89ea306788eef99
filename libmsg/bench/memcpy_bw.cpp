// memcpy-bw: memory-copy bandwidth with 1 and 2 threads on buffers far larger than the caches,
// the machine's copy limit that all-to-all figures on one host are read against.
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "viaduct/fatal.hpp"

namespace {

using namespace viaduct::bench;

struct Options {
    size_t bytes = 256 * MiB;
    long reps = 5;
    std::vector<long> threads = {1, 2};
    bool json = false;

    void check() const {}
};

const char kDescription[] =
    "Copies a source buffer to a destination buffer per thread, all threads at once, and\n"
    "prints MB/s of bytes copied (MB = 10^6 bytes), best and mean over the repetitions.";

std::vector<long> parse_thread_list(const std::string &text) {
    std::vector<long> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        auto n = parse_long(std::string_view(text).substr(start, comma - start));
        if (!n || *n < 1 || *n > 1024) {
            throw UsageError("--threads: '" + text + "' is not a list of counts in [1, 1024]");
        }
        out.push_back(*n);
        start = comma + 1;
    }
    return out;
}

void add_options(CLI::App &app, Options &o) {
    viaduct::cli::add_size(app, "--bytes", o.bytes, "buffer size per thread (default 256M)", 1);
    add_long(app, "--reps", o.reps, 1, 1000000, "timed repetitions per thread count (default 5)");
    app.add_option_function<std::string>(
           "--threads",
           [&o](const std::string &text) {
               try {
                   o.threads = parse_thread_list(text);
               } catch (const UsageError &e) {
                   throw CLI::ValidationError(e.what());
               }
           },
           "comma-separated thread counts (default 1,2)")
        ->type_name("LIST");
    app.add_flag("--json", o.json, "print one JSON object instead of a table");
}

// One thread's source and destination, touched up front so page faults are not timed.
struct CopyPair {
    AlignedBuffer src;
    AlignedBuffer dst;
};

struct Result {
    long threads;
    double best_mbps;
    double mean_mbps;
};

Result measure(const Options &o, long nthreads, std::vector<CopyPair> &pairs) {
    Result r{nthreads, 0.0, 0.0};
    // One untimed pass warms the TLBs and lets the clock settle.
    for (long rep = -1; rep < o.reps; ++rep) {
        Clock::time_point start = Clock::now();
        {
            std::vector<std::jthread> workers;
            for (long t = 0; t < nthreads; ++t) {
                CopyPair &p = pairs[static_cast<size_t>(t)];
                workers.emplace_back(
                    [&p, bytes = o.bytes] { std::memcpy(p.dst.data(), p.src.data(), bytes); });
            }
        }
        double elapsed = seconds_since(start);
        if (rep < 0) continue;
        double mbps = static_cast<double>(o.bytes) * static_cast<double>(nthreads) / elapsed / 1e6;
        r.best_mbps = std::max(r.best_mbps, mbps);
        r.mean_mbps += mbps / static_cast<double>(o.reps);
    }
    // The copies must really have happened (and cannot be optimised away).
    for (long t = 0; t < nthreads; ++t) {
        const CopyPair &p = pairs[static_cast<size_t>(t)];
        if (std::memcmp(p.dst.data(), p.src.data(), o.bytes) != 0) {
            throw Error("thread " + std::to_string(t) + ": destination differs from source");
        }
    }
    return r;
}

int run(const Options &o) {
    long most = *std::max_element(o.threads.begin(), o.threads.end());
    std::vector<CopyPair> pairs;
    for (long t = 0; t < most; ++t) {
        CopyPair p{AlignedBuffer(o.bytes), AlignedBuffer(o.bytes)};
        std::memset(p.src.data(), static_cast<int>(0x5a + t), o.bytes);
        pairs.push_back(std::move(p));
    }
    std::vector<Result> results;
    for (long n : o.threads) results.push_back(measure(o, n, pairs));

    if (o.json) {
        Json rows = Json::array();
        for (const Result &r : results)
            rows.push_back({{"threads", r.threads},
                            {"best_mbps", json_number(r.best_mbps, 1)},
                            {"mean_mbps", json_number(r.mean_mbps, 1)}});
        print_json({{"benchmark", "memcpy-bw"},
                    {"buffer_bytes", o.bytes},
                    {"reps", o.reps},
                    {"hardware_threads", std::thread::hardware_concurrency()},
                    {"results", rows}});
    } else {
        std::printf(
            "# memcpy-bw: %zu B per thread, %ld reps, %u hardware threads; MB/s of bytes "
            "copied, MB = 10^6 B\n",
            o.bytes, o.reps, std::thread::hardware_concurrency());
        std::printf("%8s %14s %14s\n", "threads", "best_MB/s", "mean_MB/s");
        for (const Result &r : results) {
            std::printf("%8ld %14.1f %14.1f\n", r.threads, r.best_mbps, r.mean_mbps);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("memcpy-bw");
    Options options;
    int rc = parse_command_line("memcpy-bw", kDescription, argc, argv, options, add_options, true);
    if (rc >= 0) return rc;
    try {
        return run(options);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "memcpy-bw: %s\n", e.what());
        return 1;
    }
}
