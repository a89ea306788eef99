// What both ends of the DataPump share: the river's options, clocks and the host's identity.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
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

int fail(const std::string &why) {
    std::fprintf(stderr, "datapump: %s\n", why.c_str());
    return 1;
}

int river_failed(river_t *r, int rc, const char *what) {
    char text[256] = "";
    if (r != nullptr) river_error(r, nullptr, text, sizeof text);
    return fail(std::string(what) + ": " + river_strerror(rc) +
                (text[0] ? std::string(": ") + text : ""));
}

}  // namespace pump
