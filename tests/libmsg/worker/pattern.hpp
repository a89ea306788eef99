// Keyed pseudo-random payloads: a receiver regenerates every byte from (source, tag, sequence),
// so corruption, truncation, a swapped message or a chunk out of place is caught and located.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace worker {

uint64_t payload_key(int source, int tag, uint64_t seq);

// A message starts with a stamp naming it when it is long enough to hold one; the rest (or all
// of a shorter message) is the keyed pattern.
struct Stamp {
    uint32_t magic;
    int32_t source;
    int32_t tag;
    uint32_t reserved;
    uint64_t seq;
    uint64_t len;
};
constexpr size_t kStampBytes = sizeof(Stamp);

void make_message(void *buf, size_t len, int source, int tag, uint64_t seq);
// "" when buf holds exactly the message make_message would build, else what is wrong and where.
std::string check_message(const void *buf, size_t len, int source, int tag, uint64_t seq);
// Reads the stamp of a message of at least kStampBytes; false if there is none.
bool read_stamp(const void *buf, size_t len, Stamp *out);

// Deterministic message sizes that mix the eager and long paths and sit on their boundaries;
// never below kStampBytes so every such message names itself.
size_t mixed_size(uint64_t key, size_t eager_max, size_t buffer_size);

uint64_t splitmix64(uint64_t x);

}  // namespace worker
