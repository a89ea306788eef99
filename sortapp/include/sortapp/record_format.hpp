// Fixed-width records ordered by unsigned lexicographic comparison of their first key_size bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "sortapp/status.hpp"

namespace sortapp {

struct RecordFormat {
    std::size_t record_size = 100;  // the sort benchmark's records
    std::size_t key_size = 10;

    Status validate() const;
    std::string describe() const;  // "100-byte records, 10-byte keys"

    // <0, 0, >0 like memcmp, on the key bytes only.
    int compare(const std::uint8_t *a, const std::uint8_t *b) const {
        return std::memcmp(a, b, key_size);
    }
};

// The first 8 key bytes as a big-endian integer (missing bytes are zero): comparing prefixes
// as integers orders records like comparing those key bytes.
inline std::uint64_t key_prefix(const std::uint8_t *key, std::size_t key_size) {
    if (key_size >= 8) {
        std::uint64_t v;
        std::memcpy(&v, key, 8);
        return __builtin_bswap64(v);
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | (i < key_size ? key[i] : 0);
    return v;
}

// Parses "100" or "100:10" style values used by the tools' --record-size/--key-size options.
Status parse_size(const std::string &text,
                  std::uint64_t &out);  // accepts K, M, G suffixes (2^10...)

}  // namespace sortapp
