// What both ends of the DataPump share: the river's options, clocks and the host's identity.
#include <sys/resource.h>

#include <chrono>
#include <fstream>

#include "pump.hpp"

namespace pump {

river_options_t river_options(const Options &o, const int *from, const int *to) {
    river_options_t r;
    river_options_init(&r);
    // Bytes as records: the source puts whole buffers, so nothing is picked per record.
    r.record_size = 1;
    r.batch_size = o.batch;
    r.credits = o.credits;
    r.sources = from;
    r.nsources = 1;
    r.sinks = to;
    r.nsinks = 1;
    return r;
}

std::string boot_id() {
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(f, id);
    return id;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace pump
