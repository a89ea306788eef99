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

inline void add_options(CLI::App &app, Args &a) {
    CLI::Option *dir =
        app.add_option("--timeline", a.dir,
                       "sample this process's counters through the sort and write DIR/"
                       "timeline.jsonl, .csv, .png and .html (DIR is created if absent)")
            ->type_name("DIR");
    viaduct::cli::add_number(app, "--sample-hz", a.sample_hz,
                             "samples per second for --timeline, 0.1 to 100 (default 10)",
                             viaduct::kMinSampleHz, viaduct::kMaxSampleHz, "samples a second", "HZ")
        ->needs(dir);
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
          sampler_(a.sample_hz, viaduct::ring_for_an_hour(a.sample_hz), device, [&progress] {
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
        in.nodes.push_back({0, viaduct::timeline::host_name(), sampler_.samples()});
        in.report = std::move(report);
        return viaduct::timeline::write(dir_, in);
    }

    const std::string &dir() const { return dir_; }

  private:
    std::string dir_;
    viaduct::Sampler sampler_;
};

}  // namespace sortapp::local_timeline
