// Record format checks and the size parser shared by the tools.
#include "sortapp/record_format.hpp"

#include <cerrno>
#include <cstdlib>

namespace sortapp {

Status RecordFormat::validate() const {
    if (record_size == 0) return Status::error("record size must be at least 1 byte");
    if (key_size == 0) return Status::error("key size must be at least 1 byte");
    if (key_size > record_size) {
        return Status::error("key size (" + std::to_string(key_size) +
                             " bytes) is larger than the record size (" +
                             std::to_string(record_size) + " bytes)");
    }
    if (record_size > (1u << 20)) return Status::error("record size above 1 MiB is not supported");
    return Status::ok();
}

std::string RecordFormat::describe() const {
    return std::to_string(record_size) + "-byte records, " + std::to_string(key_size) +
           "-byte keys";
}

Status parse_size(const std::string &text, std::uint64_t &out) {
    if (text.empty()) return Status::error("empty size");
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (end == text.c_str() || errno != 0 || text[0] == '-') {
        return Status::error("not a size: '" + text + "'");
    }
    std::string suffix(end);
    std::uint64_t mult = 1;
    if (suffix == "" || suffix == "B")
        mult = 1;
    else if (suffix == "K" || suffix == "KiB")
        mult = 1ull << 10;
    else if (suffix == "M" || suffix == "MiB")
        mult = 1ull << 20;
    else if (suffix == "G" || suffix == "GiB")
        mult = 1ull << 30;
    else if (suffix == "T" || suffix == "TiB")
        mult = 1ull << 40;
    else
        return Status::error("not a size: '" + text + "' (suffixes: K, M, G, T)");
    if (v != 0 && mult > UINT64_MAX / v) return Status::error("size too large: '" + text + "'");
    out = v * mult;
    return Status::ok();
}

}  // namespace sortapp
