// The bodies of the bootstrap frames, built and checked without side effects.
#include "bootstrap/messages.hpp"

#include <algorithm>

#include "bootstrap/frame.hpp"

namespace msg::boot {

std::vector<uint8_t> encode_hello(const Hello &h) {
    std::vector<uint8_t> b;
    put_u32(b, h.rank);
    put_u32(b, h.size);
    b.insert(b.end(), h.nonce.begin(), h.nonce.end());
    b.insert(b.end(), h.mac.begin(), h.mac.end());
    return b;
}

const char *decode_hello(const std::vector<uint8_t> &body, Hello *out) {
    size_t pos = 0;
    Hello h;
    if (body.size() != 8 + h.nonce.size() + h.mac.size() || !get_u32(body, pos, h.rank) ||
        !get_u32(body, pos, h.size))
        return "Hello is not 72 bytes";
    if (h.size == 0 || h.size > kMaxJobSize) return "Hello names an impossible job size";
    if (h.rank >= h.size) return "Hello names a rank outside its job size";
    std::copy(body.begin() + 8, body.begin() + 40, h.nonce.begin());
    std::copy(body.begin() + 40, body.end(), h.mac.begin());
    *out = h;
    return nullptr;
}

std::vector<uint8_t> encode_challenge(const Nonce &n) {
    return std::vector<uint8_t>(n.begin(), n.end());
}

const char *decode_challenge(const std::vector<uint8_t> &body, Nonce *out) {
    if (body.size() != out->size()) return "Challenge is not 32 bytes";
    std::copy(body.begin(), body.end(), out->begin());
    return nullptr;
}

std::vector<uint8_t> encode_welcome(const Mac &m) {
    return std::vector<uint8_t>(m.begin(), m.end());
}

const char *decode_welcome(const std::vector<uint8_t> &body, Mac *out) {
    if (body.size() != out->size()) return "Welcome is not 32 bytes";
    std::copy(body.begin(), body.end(), out->begin());
    return nullptr;
}

std::vector<uint8_t> encode_gather(uint32_t seq, const std::vector<uint8_t> &data) {
    std::vector<uint8_t> b;
    b.reserve(4 + data.size());
    put_u32(b, seq);
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

const char *decode_gather(const std::vector<uint8_t> &body, uint32_t *seq,
                          std::vector<uint8_t> *data) {
    size_t pos = 0;
    uint32_t s = 0;
    if (!get_u32(body, pos, s)) return "Gather is shorter than its sequence number";
    *seq = s;
    data->assign(body.begin() + 4, body.end());
    return nullptr;
}

std::vector<uint8_t> encode_seq(uint32_t seq) {
    std::vector<uint8_t> b;
    put_u32(b, seq);
    return b;
}

const char *decode_seq(const std::vector<uint8_t> &body, uint32_t *seq) {
    size_t pos = 0;
    uint32_t s = 0;
    if (!get_u32(body, pos, s) || pos != body.size()) return "sequence frame is not 4 bytes";
    *seq = s;
    return nullptr;
}

std::vector<uint8_t> encode_gather_result(const GatherResult &g) {
    std::vector<uint8_t> b;
    put_u32(b, g.seq);
    put_u32(b, static_cast<uint32_t>(g.data.size()));
    for (size_t r = 0; r < g.data.size(); ++r) {
        b.push_back(r < g.present.size() && g.present[r] ? 1 : 0);
        put_u32(b, static_cast<uint32_t>(g.data[r].size()));
        b.insert(b.end(), g.data[r].begin(), g.data[r].end());
    }
    return b;
}

const char *decode_gather_result(const std::vector<uint8_t> &body, int job_size,
                                 GatherResult *out) {
    size_t pos = 0;
    uint32_t seq = 0, n = 0;
    if (!get_u32(body, pos, seq) || !get_u32(body, pos, n))
        return "GatherResult is shorter than its header";
    if (job_size < 1 || n != static_cast<uint32_t>(job_size))
        return "GatherResult's rank count is not the job size";
    GatherResult g;
    g.seq = seq;
    g.present.assign(n, false);
    g.data.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
        if (pos >= body.size()) return "GatherResult ends inside an entry";
        uint8_t present = body[pos++];
        if (present > 1) return "GatherResult entry's present flag is not 0 or 1";
        uint32_t len = 0;
        if (!get_u32(body, pos, len)) return "GatherResult ends inside an entry";
        if (len > body.size() - pos) return "GatherResult entry's length runs past the frame";
        g.present[r] = present == 1;
        g.data[r].assign(body.begin() + static_cast<long>(pos),
                         body.begin() + static_cast<long>(pos + len));
        pos += len;
    }
    if (pos != body.size()) return "GatherResult has bytes after its last entry";
    *out = std::move(g);
    return nullptr;
}

std::vector<uint8_t> encode_failed(int rank) {
    std::vector<uint8_t> b;
    put_u32(b, static_cast<uint32_t>(rank));
    return b;
}

const char *decode_failed(const std::vector<uint8_t> &body, int job_size, int *rank) {
    size_t pos = 0;
    uint32_t r = 0;
    if (!get_u32(body, pos, r) || pos != body.size()) return "Failed is not 4 bytes";
    if (job_size < 1 || r >= static_cast<uint32_t>(job_size))
        return "Failed names a rank outside the job";
    *rank = static_cast<int>(r);
    return nullptr;
}

std::vector<uint8_t> encode_heartbeat(int silence_ms) {
    std::vector<uint8_t> b;
    put_u32(b, static_cast<uint32_t>(silence_ms));
    return b;
}

const char *decode_heartbeat(const std::vector<uint8_t> &body, int *silence_ms) {
    size_t pos = 0;
    uint32_t ms = 0;
    if (!get_u32(body, pos, ms) || pos != body.size()) return "Heartbeat is not 4 bytes";
    if (ms < 100 || ms > 86400000u) return "Heartbeat allows a silence outside [100 ms, 24 h]";
    *silence_ms = static_cast<int>(ms);
    return nullptr;
}

std::vector<uint8_t> encode_barrier_failed(uint32_t seq, int rank) {
    std::vector<uint8_t> b;
    put_u32(b, seq);
    put_u32(b, static_cast<uint32_t>(rank));
    return b;
}

const char *decode_barrier_failed(const std::vector<uint8_t> &body, int job_size, uint32_t *seq,
                                  int *rank) {
    size_t pos = 0;
    uint32_t s = 0, r = 0;
    if (!get_u32(body, pos, s) || !get_u32(body, pos, r) || pos != body.size())
        return "BarrierFailed is not 8 bytes";
    if (job_size < 1 || r >= static_cast<uint32_t>(job_size))
        return "BarrierFailed names a rank outside the job";
    *seq = s;
    *rank = static_cast<int>(r);
    return nullptr;
}

std::vector<uint8_t> encode_error(const std::string &text) {
    size_t n = text.size() < kMaxErrorText ? text.size() : kMaxErrorText;
    return std::vector<uint8_t>(text.begin(), text.begin() + static_cast<long>(n));
}

const char *decode_error(const std::vector<uint8_t> &body, std::string *text) {
    if (body.size() > kMaxErrorText) return "Error text is longer than allowed";
    std::string t;
    t.reserve(body.size());
    for (uint8_t c : body) t.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
    *text = std::move(t);
    return nullptr;
}

}  // namespace msg::boot
