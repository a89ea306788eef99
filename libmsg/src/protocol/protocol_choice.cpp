// The auto tables (protocol_choice.hpp).
#include "protocol/protocol_choice.hpp"

#include <unistd.h>

#include <cstdint>

#include "common/log.hpp"
#include "protocol/tuning.hpp"

namespace msg {

namespace {

constexpr size_t kAny = SIZE_MAX;

// One fabric's table, per mode. Read "up to max_bytes, protocol".
struct Table {
    const char *provider;  // the provider's first name ("shm", "tcp", "verbs")
    std::vector<ProtocolChoice::Range> unrestricted, restricted;
};

// scripts/compare.py on this project's 2-core machines (docs/libmsg.md,
// "Choosing the protocol"). Unrestricted, the receiver's read leads at every
// size; on shm from 16 KiB its copy is shared with the sender, two cores
// copying at once. Restricted (one long message at a time each way), the
// write leads in 10 of the 12 all-to-all cells: the receiver grants its
// buffer in the CTS and the data follows without the read's extra finish.
const Table kTables[] = {
    {"shm", {{kAny, MSG_PROTOCOL_RDMA}}, {{kAny, MSG_PROTOCOL_RDMA_WRITE}}},
    {"tcp", {{kAny, MSG_PROTOCOL_RDMA}}, {{kAny, MSG_PROTOCOL_RDMA_WRITE}}},
};

}  // namespace

std::string provider_first_name(const std::string &provider) {
    return provider.substr(0, provider.find(';'));
}

ProtocolChoice::ProtocolChoice(int configured, const std::string &provider, bool restricted) {
    if (configured != MSG_PROTOCOL_AUTO) {
        ranges_.push_back({kAny, configured});
        source_ = "configured";
        return;
    }
    const std::string name = provider_first_name(provider);
    if (take_tuned(name, restricted)) return;
    source_ = "built-in";
    for (const Table &t : kTables) {
        if (name != t.provider) continue;
        ranges_ = restricted ? t.restricted : t.unrestricted;
        return;
    }
    // Fabrics without measurements of their own: the receiver reads, as the
    // paper's VIA sort did.
    ranges_.push_back({kAny, MSG_PROTOCOL_RDMA});
}

bool ProtocolChoice::take_tuned(const std::string &provider, bool restricted) {
    bool explicit_path = false;
    const std::string path = tuning_path(&explicit_path);
    if (path.empty()) return false;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    TunedTable tuned;
    std::string why;
    if (!load_tuning(path, host, provider, restricted, tuned, &why)) {
        log_warn("the tuning file %s is ignored (%s): the built-in protocol table is used",
                 path.c_str(), why.c_str());
        return false;
    }
    if (explicit_path && !tuned.file_found)
        log_warn("VIADUCT_TUNING=%s: no such file; the built-in protocol table is used",
                 path.c_str());
    if (tuned.ranges.empty()) return false;
    ranges_ = std::move(tuned.ranges);
    source_ = "tuned on " + tuned.measured_at + " (" + path + ")";
    return true;
}

}  // namespace msg
