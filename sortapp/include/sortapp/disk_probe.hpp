// NOW-Sort's disk tool: the scratch disk's sequential read and write bandwidth, measured once
// with the sort's own I/O pattern and kept in a small cache file keyed by device.
#pragma once

#include <cstdint>
#include <string>

#include "sortapp/status.hpp"

namespace sortapp {

struct DiskBandwidth {
    double read_mb_s = 0;  // MB = 10^6 bytes
    double write_mb_s = 0;
    bool cached = false;  // read from the cache rather than measured now
};

struct DiskProbeOptions {
    std::string dir;         // directory on the disk to measure
    std::string cache_path;  // empty: no cache
    std::uint64_t bytes = 256u << 20;
    std::size_t io_size = 2u << 20;
    unsigned io_depth = 15;
    bool remeasure = false;
};

Status probe_disk(const DiskProbeOptions &options, DiskBandwidth &out);

// ${XDG_CACHE_HOME:-$HOME/.cache}/viaduct/sortapp-disk
std::string default_disk_cache_path();

}  // namespace sortapp
