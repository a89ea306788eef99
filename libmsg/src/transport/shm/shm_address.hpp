// The shm transport's address: the host layout (host/host_address.hpp) with
// the rank's region name as its name, and the check made on a peer's region
// name before it names a file to open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/host/host_address.hpp"

namespace msg {

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

inline std::vector<uint8_t> pack_shm_address(const std::string &region,
                                             const std::vector<uint8_t> &blob,
                                             const std::vector<uint8_t> &bell) {
    return pack_address(std::vector<uint8_t>(region.begin(), region.end()), blob, bell);
}

// Cuts a peer's address into *out and its region name into *region. Null if
// every length is consistent and the region's name is one a rank makes, else
// why not. blob_size: the only non-zero blob length accepted.
inline const char *parse_shm_address(const std::vector<uint8_t> &a, size_t blob_size,
                                     PeerAddress *out, std::string *region) {
    if (const char *why = cut_address(a, blob_size, out)) return why;
    region->assign(out->name.begin(), out->name.end());
    if (!shm_region_name_ok(*region)) return "not a region name this transport makes";
    return nullptr;
}

}  // namespace msg
