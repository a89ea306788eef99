// NOW-Sort's disk tool: the scratch disk's read, write and mixed (read and write at once)
// bandwidth, measured with the sort's own request size and depth, kept in a JSON cache per
// device together with when and under which conditions it was measured.
#pragma once

#include <cstdint>
#include <string>

#include "sortapp/expectation.hpp"
#include "sortapp/status.hpp"

namespace sortapp {

struct DiskProbeOptions {
    std::string dir;         // directory on the disk to measure; the probe file goes there
    std::string cache_path;  // empty: no cache
    std::uint64_t bytes = 256u << 20;  // written, then read, then read+written again
    std::size_t io_size = 2u << 20;    // the sort's request size and depth
    unsigned io_depth = 15;
    double max_seconds = 5;  // each of the three sweeps stops after this long
    bool remeasure = false;  // ignore the cache
    // A phase that beats the figure warns on stderr (sortapp local); a node of the
    // distributed sort leaves that to the monitor's report, which says it once for the job.
    bool warn_stale = true;
};

// The circumstances of one measurement: a figure is only as good as these.
struct DiskConditions {
    std::string date;        // UTC, ISO 8601
    double measured_at = 0;  // seconds since the epoch (sub-second: two measurements differ)
    std::uint64_t io_size = 0;
    unsigned io_depth = 0;
    std::uint64_t file_bytes = 0;  // bytes the write sweep wrote
    double load_average = -1;      // the 1-minute load average just before (-1: unknown)
    std::string device;            // st_dev of the directory
    bool direct = false;           // O_DIRECT; otherwise the page cache was dropped first
    double seconds = 0;            // how long the measurement took
};

struct DiskBandwidth {
    double read_mb_s = 0;  // MB = 10^6 bytes
    double write_mb_s = 0;
    bool cached = false;  // read from the cache rather than measured now
    // The cache entry was marked stale by a sort that beat it. It is still used: only
    // `sortapp probe` or --remeasure measures again, never a sort unasked (that would put the
    // probe's seconds inside a timed run).
    bool marked_stale = false;
    double mixed_mb_s = 0;  // bytes read plus written per second, both going on at once
    DiskConditions conditions;
    // Where the figure came from, so a stale one can be measured again; empty dir: given
    // on the command line, nothing to re-measure.
    DiskProbeOptions source;

    Rates rates(double network_mb_s = 0) const {
        return Rates{read_mb_s, write_mb_s, mixed_mb_s, network_mb_s};
    }
};

// The cached figure for the directory's device when there is a sound one taken with the same
// request size and depth (unless options.remeasure), else a fresh measurement, cached. An entry
// marked stale is used all the same (marked_stale says so).
Status probe_disk(const DiskProbeOptions &options, DiskBandwidth &out);

// Measures now, never looks at or writes the cache. The probe file is removed on every path.
Status measure_disk(const DiskProbeOptions &options, DiskBandwidth &out);

// The cache file is untrusted input: anything malformed is not used (and `warning` says why);
// false also when there is no entry for the device.
bool read_disk_cache(const std::string &path, const std::string &device, DiskBandwidth &out,
                     std::string &warning);
// Replaces the device's entry (the file is written whole and renamed into place).
Status write_disk_cache(const std::string &path, const DiskBandwidth &figure);
// Marks the device's entry stale: still used, and said so, until measured again.
Status mark_disk_cache_stale(const std::string &path, const std::string &device);

// The figure and its conditions as one JSON object.
std::string disk_figure_json(const DiskBandwidth &figure);

// A phase beat the expectation `used` gave: a warning on stderr naming the figure and when
// and under which load it was measured.
void warn_stale_figure(const std::string &phase, double actual, double expected,
                       const DiskBandwidth &used);
// Then marks the cache entry stale, without measuring: the disk is measured again only when
// asked (`sortapp probe`, --remeasure). Returns a note for the report. Figures given by hand
// are left alone.
std::string mark_stale_figure(const DiskBandwidth &used);

// ${XDG_CACHE_HOME:-$HOME/.cache}/viaduct/sortapp-disk.json, HOME from the password database
// when unset; "" (no cache) when there is no home. Only absolute directories count.
std::string default_disk_cache_path();

}  // namespace sortapp
