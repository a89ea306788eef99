// What a rank publishes as its shm transport address, and the checks made on
// a peer's before any part of it names a file or a process: its region's
// name (1-byte length, name), the cross-memory blob (1-byte length, blob) and
// the doorbell name (the rest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace msg {

struct ShmPeerAddress {
    std::string region;
    std::vector<uint8_t> blob, bell;
};

inline std::vector<uint8_t> pack_shm_address(const std::string &region,
                                             const std::vector<uint8_t> &blob,
                                             const std::vector<uint8_t> &bell) {
    std::vector<uint8_t> out(2 + region.size() + blob.size() + bell.size());
    uint8_t *p = out.data();
    *p++ = static_cast<uint8_t>(region.size());
    if (!region.empty()) std::memcpy(p, region.data(), region.size());
    p += region.size();
    *p++ = static_cast<uint8_t>(blob.size());
    if (!blob.empty()) std::memcpy(p, blob.data(), blob.size());
    p += blob.size();
    if (!bell.empty()) std::memcpy(p, bell.data(), bell.size());
    return out;
}

// A region name as ShmTransport makes it: "/viaduct-" then digits, '-' and
// lower-case letters and hex digits only (no '/', '.' or NUL to point elsewhere).
inline bool shm_region_name_ok(const std::string &name) {
    const std::string prefix = "/viaduct-";
    if (name.size() <= prefix.size() || name.size() > 64 || name.compare(0, prefix.size(), prefix))
        return false;
    for (size_t i = prefix.size(); i < name.size(); ++i) {
        const char c = name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) return false;
    }
    return true;
}

// Null if every length is consistent and the region's name is one a rank
// makes, else why not. blob_size: the only non-zero blob length accepted.
inline const char *parse_shm_address(const std::vector<uint8_t> &a, size_t blob_size,
                                     ShmPeerAddress *out) {
    if (a.size() < 2) return "shorter than an address";
    const size_t len = a[0];
    if (a.size() < 2 + len) return "region name runs past the end";
    const size_t blob = a[1 + len];
    if (blob != 0 && blob != blob_size) return "cross-memory blob of the wrong size";
    if (a.size() < 2 + len + blob) return "cross-memory blob runs past the end";
    out->region.assign(a.begin() + 1, a.begin() + 1 + static_cast<long>(len));
    if (!shm_region_name_ok(out->region)) return "not a region name this transport makes";
    auto blob_at = a.begin() + 2 + static_cast<long>(len);
    out->blob.assign(blob_at, blob_at + static_cast<long>(blob));
    out->bell.assign(blob_at + static_cast<long>(blob), a.end());
    return nullptr;
}

}  // namespace msg
