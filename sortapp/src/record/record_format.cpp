// Record format checks and the size parser shared by the tools.
#include "sortapp/record_format.hpp"

#include <cerrno>
#include <cstdlib>

#include "viaduct/env.hpp"

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

// The one size syntax of every tool and VIADUCT_* setting (viaduct::env::parse_size).
Status parse_size(const std::string &text, std::uint64_t &out) {
    unsigned long long v = 0;
    if (!viaduct::env::parse_size(text.c_str(), &v))
        return Status::error("not a size: '" + text + "' (e.g. 4096, 16K, 16KiB, 1G)");
    out = v;
    return Status::ok();
}

}  // namespace sortapp
