// The auto tables (protocol_choice.hpp).
#include "protocol/protocol_choice.hpp"

#include <cstdint>

namespace msg {

namespace {

constexpr size_t kAny = SIZE_MAX;
constexpr size_t kMiB = size_t{1} << 20;

// One fabric's table, per mode. Read "up to max_bytes, protocol".
struct Table {
    const char *provider;  // the provider's first name ("shm", "tcp", "verbs")
    std::vector<ProtocolChoice::Range> unrestricted, restricted;
};

// scripts/compare.py on this project's 2-core machines (docs/libmsg.md,
// "Choosing the protocol"). Unrestricted, the receiver's read leads except on
// shm past 4 MiB, where the ping-pong has the sender's write ahead; restricted
// (one long message at a time each way), the write leads in 10 of the 12
// all-to-all cells: the receiver grants its buffer in the CTS and the data
// follows without the read's extra finish.
const Table kTables[] = {
    {"shm",
     {{4 * kMiB, MSG_PROTOCOL_RDMA}, {kAny, MSG_PROTOCOL_RDMA_WRITE}},
     {{kAny, MSG_PROTOCOL_RDMA_WRITE}}},
    {"tcp", {{kAny, MSG_PROTOCOL_RDMA}}, {{kAny, MSG_PROTOCOL_RDMA_WRITE}}},
};

// The provider's first name: "tcp;ofi_rxm" -> "tcp".
std::string first_name(const std::string &provider) {
    return provider.substr(0, provider.find(';'));
}

}  // namespace

ProtocolChoice::ProtocolChoice(int configured, const std::string &provider, bool restricted) {
    if (configured != MSG_PROTOCOL_AUTO) {
        ranges_.push_back({kAny, configured});
        return;
    }
    const std::string name = first_name(provider);
    for (const Table &t : kTables) {
        if (name != t.provider) continue;
        ranges_ = restricted ? t.restricted : t.unrestricted;
        return;
    }
    // Fabrics without measurements of their own: the receiver reads, as the
    // paper's VIA sort did.
    ranges_.push_back({kAny, MSG_PROTOCOL_RDMA});
}

}  // namespace msg
