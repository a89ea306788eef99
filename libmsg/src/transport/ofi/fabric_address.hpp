// What a rank publishes as its ofi address, and the checks made on a peer's
// before any part of it reaches libfabric, the doorbell or cross-memory copies.
#pragma once

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "transport/host/host_address.hpp"

namespace msg {

// Longest fabric name accepted from a peer in a string format (shm's names
// are a few dozen bytes; libfabric's own buffers for them are 256).
constexpr size_t kMaxStringFabricName = 256;

// Null if `len` bytes at `a` are an address of the provider's format that
// fi_av_insert can read without going past them, else why not. own_len: the
// length of this endpoint's own name, the size of a fixed-size format.
inline const char *check_fabric_name(uint32_t format, const uint8_t *a, size_t len,
                                     size_t own_len) {
    static constexpr const char *kFamilyLength = "fabric name's length does not match its family";
    if (len == 0) return "empty fabric name";
    sa_family_t family = 0;
    if (len >= sizeof family) std::memcpy(&family, a, sizeof family);
    switch (format) {
        case FI_SOCKADDR_IN:
            if (len != sizeof(sockaddr_in)) return "fabric name not the size of an IPv4 address";
            if (family != AF_INET) return "fabric name not an IPv4 address";
            return nullptr;
        case FI_SOCKADDR_IN6:
            if (len != sizeof(sockaddr_in6)) return "fabric name not the size of an IPv6 address";
            if (family != AF_INET6) return "fabric name not an IPv6 address";
            return nullptr;
        case FI_SOCKADDR:
            // The provider reads as many bytes as the family says.
            if (len < sizeof family) return "fabric name shorter than an address family";
            if (family == AF_INET) return len == sizeof(sockaddr_in) ? nullptr : kFamilyLength;
            if (family == AF_INET6) return len == sizeof(sockaddr_in6) ? nullptr : kFamilyLength;
            // Other families (InfiniBand's): as long as ours.
            return len == own_len ? nullptr : kFamilyLength;
        case FI_ADDR_STR:
            // Read up to its NUL: there must be one, at the end and nowhere before.
            if (len > kMaxStringFabricName) return "fabric name longer than a string address";
            if (a[len - 1] != '\0') return "fabric name not NUL-terminated";
            for (size_t i = 0; i + 1 < len; ++i)
                if (a[i] < 0x20 || a[i] > 0x7e) return "fabric name not printable text";
            return nullptr;
        default:
            // Fixed-size formats (InfiniBand, PSM, ...): every rank's is as long as ours.
            if (len != own_len) return "fabric name not the provider's address size";
            return nullptr;
    }
}

// Cuts a peer's address into *out (host_address.hpp). Null if every length in
// it is consistent and its fabric name passes check_fabric_name, else why not.
inline const char *parse_address(const std::vector<uint8_t> &a, uint32_t format,
                                 size_t own_fabric_len, size_t blob_size, PeerAddress *out) {
    if (const char *why = cut_address(a, blob_size, out)) return why;
    return check_fabric_name(format, out->name.data(), out->name.size(), own_fabric_len);
}

}  // namespace msg
