// libremoteio's counters (rio_stats_t), kept by the client and the server
// and read by rio_get_stats from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "rio/rio.h"

namespace remoteio {

struct Stats {
    void fill(rio_stats_t *s) const {
        s->requests_issued = requests_issued;
        s->replies_received = replies_received;
        s->requests_served = requests_served;
        s->requests_forwarded = requests_forwarded;
        s->requests_refused = requests_refused;
        s->bad_requests = bad_requests;
        s->bytes_read = bytes_read;
        s->bytes_written = bytes_written;
        s->request_data_held = request_data_held;
    }

    // The client's.
    std::atomic<uint64_t> requests_issued{0}, replies_received{0};
    // The server's.
    std::atomic<uint64_t> requests_served{0}, requests_forwarded{0}, requests_refused{0},
        bad_requests{0}, bytes_read{0}, bytes_written{0}, request_data_held{0};
};

}  // namespace remoteio
