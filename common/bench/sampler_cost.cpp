// sampler-cost: what one counter sample costs (the /proc and /sys reads, the progress call and
// the ring) and so the share of one CPU that sampling at 10 Hz and at 100 Hz takes.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "viaduct/clock.hpp"
#include "viaduct/counters.hpp"
#include "viaduct/sampler.hpp"

namespace {

constexpr int kRepetitions = 5;
constexpr long kMaxSamples = 10'000'000;

struct Options {
    long samples = 2000;
    bool json = false;
};

void print_usage(FILE *to) {
    std::fprintf(to,
                 "usage: sampler-cost [SAMPLES] [--json]\n"
                 "Takes SAMPLES counter samples back to back (default 2000), as the sampler's\n"
                 "thread takes them, reading the disk that holds the current directory, and\n"
                 "prints the wall and CPU time (getrusage) of one sample and the share of one\n"
                 "CPU that sampling at 10 Hz and at 100 Hz takes: the median of %d repetitions.\n"
                 "  --json  print one JSON object instead of a line\n",
                 kRepetitions);
}

// The options of argv; exits 0 after --help and 2, with the usage, on anything else unknown.
Options parse_args(int argc, char **argv) {
    Options o;
    bool have_count = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            print_usage(stdout);
            std::exit(0);
        }
        if (arg == "--json") {
            o.json = true;
            continue;
        }
        long n = 0;
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
        if (have_count || ec != std::errc() || end != arg.data() + arg.size() || n < 1 ||
            n > kMaxSamples) {
            std::fprintf(stderr, "sampler-cost: '%s' is not a sample count in [1, %ld]\n",
                         arg.c_str(), kMaxSamples);
            print_usage(stderr);
            std::exit(2);
        }
        o.samples = n;
        have_count = true;
    }
    return o;
}

double cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const auto seconds = [](const timeval &tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

struct Cost {
    double wall_us = 0;  // per sample
    double cpu_us = 0;
};

// One repetition: `samples` samples into a ring that holds them all, as the sampler's thread
// takes each (with a progress function reading atomics, as a program's does).
Cost measure(long samples, const std::string &device) {
    std::atomic<uint64_t> records{0};
    viaduct::Sampler sampler(10, static_cast<std::size_t>(std::max(samples, 2L)), device, [&] {
        return viaduct::Sampler::Progress{1, records.fetch_add(1, std::memory_order_relaxed), 0, 0,
                                          0};
    });
    const double cpu_start = cpu_seconds();
    const auto wall_start = viaduct::Clock::now();
    for (long i = 0; i < samples; ++i) sampler.sample_now();
    const double wall = viaduct::seconds_since(wall_start);
    const double cpu = cpu_seconds() - cpu_start;
    return {wall * 1e6 / static_cast<double>(samples), cpu * 1e6 / static_cast<double>(samples)};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Share of one CPU, in percent, that samples costing `cpu_us` each take at `hz`.
double cpu_percent(double cpu_us, double hz) {
    return cpu_us * hz / 1e6 * 100;
}

int run(const Options &o) {
    const std::string device = viaduct::block_device_for(".");
    measure(std::min(o.samples, 100L), device);  // warms the page cache and the allocator
    std::vector<double> wall, cpu;
    for (int rep = 0; rep < kRepetitions; ++rep) {
        const Cost c = measure(o.samples, device);
        wall.push_back(c.wall_us);
        cpu.push_back(c.cpu_us);
    }
    const double wall_us = median(wall);
    const double cpu_us = median(cpu);
    if (o.json) {
        const nlohmann::json j = {{"benchmark", "sampler-cost"},
                                  {"samples", o.samples},
                                  {"repetitions", kRepetitions},
                                  {"device", device},
                                  {"wall_us_per_sample", wall_us},
                                  {"cpu_us_per_sample", cpu_us},
                                  {"cpu_percent_at_10_hz", cpu_percent(cpu_us, 10)},
                                  {"cpu_percent_at_100_hz", cpu_percent(cpu_us, 100)}};
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::printf(
        "sampler-cost: %ld samples x %d repetitions (median), disk %s: %.1f us wall, %.1f us "
        "CPU each; at 10 Hz %.3f%% of one CPU, at 100 Hz %.3f%%\n",
        o.samples, kRepetitions, device.empty() ? "none" : device.c_str(), wall_us, cpu_us,
        cpu_percent(cpu_us, 10), cpu_percent(cpu_us, 100));
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(parse_args(argc, argv));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "sampler-cost: %s\n", e.what());
        return 1;
    }
}
