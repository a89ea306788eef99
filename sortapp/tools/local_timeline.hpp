// `sortapp local --timeline DIR`: the counter sampler the cluster sort's nodes use, run through
// the whole local sort, and the timeline of this one process written when the sort ends.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sortapp/local_sort.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/counters.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"
#include "viaduct/sampler.hpp"
#include "viaduct/timeline.hpp"

namespace sortapp::local_timeline {

struct Args {
    std::string dir;  // empty: no timeline
    double sample_hz = 10;
};

inline constexpr double kMinHz = 0.1, kMaxHz = 100;
// The ring holds an hour at the default rate (about 6 MB); a longer sort keeps its last hour.
inline constexpr std::size_t kRingSamples = 36000;

// --sample-hz's value: a number of samples per second in [kMinHz, kMaxHz].
inline double parse_hz(const std::string &text) {
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0' || errno != 0 || !std::isfinite(v))
        throw CLI::ValidationError("--sample-hz: '" + text +
                                   "' is not a number of samples per second");
    if (v < kMinHz || v > kMaxHz)
        throw CLI::ValidationError("--sample-hz: " + text + " is outside 0.1 to 100 per second");
    return v;
}

inline void add_options(CLI::App &app, Args &a) {
    CLI::Option *dir =
        app.add_option("--timeline", a.dir,
                       "sample this process's counters through the sort and write DIR/"
                       "timeline.jsonl, .csv, .png and .html (DIR is created if absent)")
            ->type_name("DIR");
    app.add_option_function<std::string>(
           "--sample-hz", [&a](const std::string &v) { a.sample_hz = parse_hz(v); },
           "samples per second for --timeline, 0.1 to 100 (default 10)")
        ->type_name("HZ")
        ->needs(dir);
}

// Why the timeline cannot go into `dir` ("" when it can), checked before the sort so that a
// refused directory costs no sorting: the directory itself when it exists, else the nearest
// directory above it that does (a directory made in one that every user may rename entries of
// could be swapped under the writer).
inline std::string refusal(const std::string &dir) {
    std::string at = dir;
    struct stat st {};
    while (::stat(at.c_str(), &st) != 0) {
        if (errno != ENOENT) return "cannot use " + at + ": " + std::strerror(errno);
        const std::string up = viaduct::path_dir(at);
        if (up == at) return "";
        at = up;
    }
    if (!S_ISDIR(st.st_mode)) return at + " is not a directory";
    return viaduct::dir_refusal(at, viaduct::DirTrust::shared);
}

inline std::string host_name() {
    char name[HOST_NAME_MAX + 1] = "";
    if (::gethostname(name, sizeof name) != 0) return "unknown";
    name[HOST_NAME_MAX] = '\0';
    return name;
}

// The block device the counters follow: the output's directory's, else the scratch
// directory's (the output on tmpfs, the runs on a disk).
inline std::string data_device(const std::string &output, const std::string &scratch) {
    std::string device = viaduct::block_device_for(viaduct::path_dir(output));
    return device.empty() ? viaduct::block_device_for(scratch) : device;
}

// Samples this process while the sort runs; writes its timeline when told the sort is over.
class Recorder {
  public:
    Recorder(const Args &a, const std::string &device, const LocalSortProgress &progress)
        : dir_(a.dir),
          sampler_(a.sample_hz,
                   std::clamp<std::size_t>(std::size_t(a.sample_hz * 3600), 16, kRingSamples),
                   device, [&progress] {
                       viaduct::Sampler::Progress p;
                       p.phase = progress.phase();
                       p.records = progress.records();
                       p.bytes = progress.bytes();
                       return p;
                   }) {}

    void start() { sampler_.start(); }

    // Stops the sampler and writes the timeline: one node, this process. Returns the paths
    // written; throws std::runtime_error naming the file that could not be.
    std::vector<std::string> finish(const std::string &title, std::string report) {
        sampler_.stop();
        if (sampler_.dropped() > 0)
            report += "\nthe timeline keeps the last " + std::to_string(sampler_.capacity()) +
                      " samples; the " + std::to_string(sampler_.dropped()) +
                      " before them were dropped\n";
        viaduct::timeline::Input in;
        in.title = title;
        in.phase_names = local_sort_phases();
        in.nodes.push_back({0, host_name(), sampler_.samples()});
        in.report = std::move(report);
        return viaduct::timeline::write(dir_, in);
    }

    const std::string &dir() const { return dir_; }

  private:
    std::string dir_;
    viaduct::Sampler sampler_;
};

}  // namespace sortapp::local_timeline
