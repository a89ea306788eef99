// What the verbs transport takes from peers before a queue pair exists: the
// published address (listener IPv4 address and port) and the hello carried
// as connection private data; each is checked before use.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace msg {

constexpr uint8_t kVerbsAddrMagic[4] = {'V', 'R', 'C', '1'};
constexpr size_t kVerbsAddrSize = 10;         // magic, IPv4 address, port (network order)
constexpr uint32_t kHelloMagic = 0x76524331;  // "vRC1"

// Each side of a connection tells the other who it is (private data).
struct ConnectHello {
    uint32_t magic;
    uint32_t rank;
    uint32_t size;
};

inline std::vector<uint8_t> pack_verbs_address(const sockaddr_in &sin) {
    std::vector<uint8_t> out(std::begin(kVerbsAddrMagic), std::end(kVerbsAddrMagic));
    const auto *ip = reinterpret_cast<const uint8_t *>(&sin.sin_addr.s_addr);
    const auto *pt = reinterpret_cast<const uint8_t *>(&sin.sin_port);
    out.insert(out.end(), ip, ip + 4);
    out.insert(out.end(), pt, pt + 2);
    return out;
}

// Null if `a` is a verbs address a listener could have published (then
// *out is where to connect), else why not.
inline const char *parse_verbs_address(const std::vector<uint8_t> &a, sockaddr_in *out) {
    if (a.size() != kVerbsAddrSize) return "not the size of a verbs address";
    if (std::memcmp(a.data(), kVerbsAddrMagic, sizeof kVerbsAddrMagic) != 0)
        return "not a verbs address";
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    std::memcpy(&sin.sin_addr.s_addr, a.data() + 4, 4);
    std::memcpy(&sin.sin_port, a.data() + 8, 2);
    if (sin.sin_addr.s_addr == htonl(INADDR_ANY) || sin.sin_addr.s_addr == htonl(INADDR_BROADCAST))
        return "no listener can be at that IPv4 address";
    if (sin.sin_port == 0) return "port 0";
    *out = sin;
    return nullptr;
}

// Null if `data` (connection private data; the fabric may pad it) holds a
// hello from a rank of a job of job_size ranks (then *out is the hello),
// else why not.
inline const char *check_hello(const std::vector<uint8_t> &data, size_t job_size,
                               ConnectHello *out) {
    ConnectHello h{};
    if (data.size() < sizeof h) return "shorter than a hello";
    std::memcpy(&h, data.data(), sizeof h);
    if (h.magic != kHelloMagic) return "bad magic";
    if (h.size != job_size) return "another job size";
    if (h.rank >= job_size) return "rank outside the job";
    *out = h;
    return nullptr;
}

}  // namespace msg
