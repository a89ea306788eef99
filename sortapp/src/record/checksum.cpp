// The sort benchmark's checksum: zlib's CRC32 of each record, summed into 128 bits.
#include "sortapp/checksum.hpp"

#include <zlib.h>

#include <cstdio>

namespace sortapp {

std::uint32_t record_crc32(const std::uint8_t *record, std::size_t size) {
    return static_cast<std::uint32_t>(crc32(0L, record, static_cast<uInt>(size)));
}

void Checksum::add_records(const std::uint8_t *records, std::size_t count,
                           std::size_t record_size) {
    for (std::size_t i = 0; i < count; ++i)
        add(record_crc32(records + i * record_size, record_size));
}

std::string Checksum::hex() const {
    char text[40];
    if (hi != 0) {
        std::snprintf(text, sizeof text, "%llx%016llx", static_cast<unsigned long long>(hi),
                      static_cast<unsigned long long>(lo));
    } else {
        std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(lo));
    }
    return text;
}

bool Checksum::parse_hex(const std::string &text, Checksum &out) {
    if (text.empty() || text.size() > 32) return false;
    Checksum c;
    for (char ch : text) {
        int d;
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            d = ch - 'A' + 10;
        else
            return false;
        c.hi = (c.hi << 4) | (c.lo >> 60);
        c.lo = (c.lo << 4) | static_cast<std::uint64_t>(d);
    }
    out = c;
    return true;
}

}  // namespace sortapp
