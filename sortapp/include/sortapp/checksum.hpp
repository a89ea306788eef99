// The sort benchmark's order-independent checksum: the 128-bit sum of the CRC32 (zlib's crc32,
// initial value 0) of every record. Sums of partitions add up to the sum of the whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sortapp {

std::uint32_t record_crc32(const std::uint8_t *record, std::size_t size);

struct Checksum {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;

    void add(std::uint32_t crc) {
        std::uint64_t before = lo;
        lo += crc;
        if (lo < before) ++hi;
    }
    void add(const Checksum &other) {
        std::uint64_t before = lo;
        lo += other.lo;
        hi += other.hi + (lo < before ? 1 : 0);
    }
    void add_records(const std::uint8_t *records, std::size_t count, std::size_t record_size);

    bool operator==(const Checksum &) const = default;
    // Lower-case hex without leading zeros, as valsort prints it ("0" for nothing).
    std::string hex() const;
    static bool parse_hex(const std::string &text, Checksum &out);
};

}  // namespace sortapp
