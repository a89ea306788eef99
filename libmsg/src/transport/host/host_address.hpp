// What a transport of one host publishes as a rank's address: its own name
// for the rank (libfabric's address, or the shm transport's region name; a
// 2-byte little-endian length, then the name), the cross-memory copies' blob
// (a 1-byte length, then the blob) and the doorbell's name (the rest). The
// lengths are checked here before any part is used; each transport checks
// its name itself (ofi/fabric_address.hpp, shm/shm_address.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace msg {

class CrossMemory;
class Doorbell;

// A peer's address, cut into its parts.
struct PeerAddress {
    std::vector<uint8_t> name;  // the transport's name for the rank
    std::vector<uint8_t> blob;  // cross-memory copies' blob (empty or blob_size bytes)
    std::vector<uint8_t> bell;  // doorbell name (may be empty)
};

inline std::vector<uint8_t> pack_address(const std::vector<uint8_t> &name,
                                         const std::vector<uint8_t> &blob,
                                         const std::vector<uint8_t> &bell) {
    std::vector<uint8_t> out(2 + name.size() + 1 + blob.size() + bell.size());
    uint8_t *p = out.data();
    *p++ = static_cast<uint8_t>(name.size() & 0xff);
    *p++ = static_cast<uint8_t>(name.size() >> 8);
    if (!name.empty()) std::memcpy(p, name.data(), name.size());
    p += name.size();
    *p++ = static_cast<uint8_t>(blob.size());
    if (!blob.empty()) std::memcpy(p, blob.data(), blob.size());
    p += blob.size();
    if (!bell.empty()) std::memcpy(p, bell.data(), bell.size());
    return out;
}

// Cuts a peer's address into *out. Null if every length in it is consistent
// (blob_size: the only non-zero blob length accepted), else why not.
inline const char *cut_address(const std::vector<uint8_t> &a, size_t blob_size, PeerAddress *out) {
    if (a.size() < 3) return "shorter than an address";
    const size_t len = a[0] | (static_cast<size_t>(a[1]) << 8);
    if (a.size() < 3 + len) return "name runs past the end";
    const size_t blob = a[2 + len];
    if (blob != 0 && blob != blob_size) return "cross-memory blob of the wrong size";
    if (a.size() < 3 + len + blob) return "cross-memory blob runs past the end";
    out->name.assign(a.begin() + 2, a.begin() + 2 + static_cast<long>(len));
    auto blob_at = a.begin() + 3 + static_cast<long>(len);
    out->blob.assign(blob_at, blob_at + static_cast<long>(blob));
    out->bell.assign(blob_at + static_cast<long>(blob), a.end());
    return nullptr;
}

// Connects this rank's doorbell and cross-memory copies (either may be null)
// to every rank's, from their addresses (whose blobs and bells it takes).
// 0, or the doorbell's error, logged.
int connect_host_peers(Doorbell *bell, CrossMemory *cma, std::vector<PeerAddress> &peers, int self);

}  // namespace msg
