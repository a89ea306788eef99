// What the river scenarios share on top of libmsg's worker harness: status
// checks that speak river_strerror, self-checking records, checksums sent
// from each source to each sink, and the bounds every run's statistics obey.
#pragma once

#include <river/river.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"

// VSTATUS(call, expected): like WSTATUS, with river's status names.
#define VSTATUS(call, expected)                                                                \
    do {                                                                                       \
        const int vstatus_rc = (call);                                                         \
        const int vstatus_want = (expected);                                                   \
        if (vstatus_rc != vstatus_want)                                                        \
            ::worker::fail_at(__FILE__, __LINE__, #call, "returned %d (%s), expected %d (%s)", \
                              vstatus_rc, river_strerror(vstatus_rc), vstatus_want,            \
                              river_strerror(vstatus_want));                                   \
    } while (0)

namespace rivertest {

using worker::Args;

// Application tags, below the river's.
constexpr int kTagChecksum = 100;
constexpr int kTagGo = 101;
constexpr int kTagDone = 102;

// A record: an 8-byte key (big-endian, uniform), the source's rank, its
// sequence number, a check over the three, and filler; at least 32 bytes.
constexpr size_t kMinRecord = 32;
void make_record(uint8_t *rec, size_t size, int source, uint64_t seq);
// Null if the record is whole, else what is wrong with it; its source and seq.
const char *check_record(const uint8_t *rec, size_t size, int *source, uint64_t *seq);

// Count, sum and xor of the records' hashes: equal at both ends of a flow.
struct Checksum {
    uint64_t count = 0, sum = 0, x = 0;
    void add(const uint8_t *rec, size_t size);
    bool operator==(const Checksum &o) const = default;
};
void send_checksum(msg_context_t *ctx, int dest, const Checksum &c);
Checksum recv_checksum(msg_context_t *ctx, int source);

// Options with the given sizes and a timeout that ends a scenario in bounded time.
river_options_t options(size_t record_size, size_t batch_size, int credits);
// nsinks - 1 keys dividing the 8-byte key space evenly.
std::vector<uint8_t> even_splitters(int nsinks);

// A source's and a sink's statistics obey the bounds the design sets.
void check_bounds(river_t *river, int credits, size_t nsources);
// The river's error text and rank, for a check's message.
std::string describe_error(river_t *river);
// How long noticing a failed peer may take (VIADUCT_TIMEOUT_MS twice, plus slack).
double failure_bound_seconds();

}  // namespace rivertest
