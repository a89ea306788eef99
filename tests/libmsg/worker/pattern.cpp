// The keyed payload pattern and message stamps used by every data-carrying scenario.
#include "pattern.hpp"

#include <cstdio>
#include <cstring>

namespace worker {
namespace {

constexpr uint32_t kStampMagic = 0x56545354;  // "VTST"

uint64_t pattern_word(uint64_t key, size_t index) {
    return splitmix64(key + static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ull);
}

void fill_pattern(unsigned char *p, size_t len, uint64_t key) {
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w = pattern_word(key, i);
        std::memcpy(p + i * 8, &w, 8);
    }
    if (len % 8 != 0) {
        uint64_t w = pattern_word(key, words);
        std::memcpy(p + words * 8, &w, len % 8);
    }
}

// Offset of the first wrong byte, or len.
size_t pattern_mismatch(const unsigned char *p, size_t len, uint64_t key) {
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t want = pattern_word(key, i), got;
        std::memcpy(&got, p + i * 8, 8);
        if (got != want) {
            for (size_t b = 0; b < 8; ++b)
                if (reinterpret_cast<unsigned char *>(&got)[b] !=
                    reinterpret_cast<unsigned char *>(&want)[b])
                    return i * 8 + b;
        }
    }
    if (len % 8 != 0) {
        uint64_t want = pattern_word(key, words);
        const unsigned char *w = reinterpret_cast<const unsigned char *>(&want);
        for (size_t b = 0; b < len % 8; ++b)
            if (p[words * 8 + b] != w[b]) return words * 8 + b;
    }
    return len;
}

}  // namespace

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t payload_key(int source, int tag, uint64_t seq) {
    return splitmix64((static_cast<uint64_t>(static_cast<uint32_t>(source)) << 32) ^
                      static_cast<uint32_t>(tag) ^ splitmix64(seq));
}

void make_message(void *buf, size_t len, int source, int tag, uint64_t seq) {
    auto *p = static_cast<unsigned char *>(buf);
    size_t body = 0;
    if (len >= kStampBytes) {
        Stamp s{kStampMagic, source, tag, 0, seq, len};
        std::memcpy(p, &s, sizeof s);
        body = kStampBytes;
    }
    fill_pattern(p + body, len - body, payload_key(source, tag, seq));
}

bool read_stamp(const void *buf, size_t len, Stamp *out) {
    if (len < kStampBytes) return false;
    std::memcpy(out, buf, sizeof *out);
    return out->magic == kStampMagic;
}

std::string check_message(const void *buf, size_t len, int source, int tag, uint64_t seq) {
    const auto *p = static_cast<const unsigned char *>(buf);
    char text[256];
    size_t body = 0;
    if (len >= kStampBytes) {
        Stamp s;
        if (!read_stamp(buf, len, &s)) return "no message stamp at offset 0";
        if (s.source != source || s.tag != tag || s.seq != seq || s.len != len) {
            std::snprintf(
                text, sizeof text,
                "stamp says (source %d, tag %d, seq %llu, len %llu), expected (source %d, "
                "tag %d, seq %llu, len %zu)",
                s.source, s.tag, static_cast<unsigned long long>(s.seq),
                static_cast<unsigned long long>(s.len), source, tag,
                static_cast<unsigned long long>(seq), len);
            return text;
        }
        body = kStampBytes;
    }
    size_t bad = pattern_mismatch(p + body, len - body, payload_key(source, tag, seq));
    if (bad == len - body) return "";
    std::snprintf(text, sizeof text, "payload differs at byte %zu of %zu", bad + body, len);
    return text;
}

size_t mixed_size(uint64_t key, size_t eager_max, size_t buffer_size) {
    uint64_t r = splitmix64(key);
    uint64_t pick = r % 100;
    uint64_t spread = r >> 8;
    size_t size;
    if (pick < 40) {
        size = kStampBytes + spread % (eager_max - kStampBytes + 1);  // eager
    } else if (pick < 50) {
        const size_t edges[] = {eager_max - 1,   eager_max,   eager_max + 1,
                                buffer_size - 1, buffer_size, buffer_size + 1};
        size = edges[spread % 6];
    } else if (pick < 80) {
        size = eager_max + 1 + spread % (2 * buffer_size - eager_max);  // long, a few chunks
    } else {
        size = 2 * buffer_size + spread % (2 * buffer_size + 1);  // long, several chunks
    }
    return size < kStampBytes ? kStampBytes : size;
}

}  // namespace worker
