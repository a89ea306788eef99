// Plumbing shared by the benchmark programs: errors, option parsing, size strings, aligned
// buffers, timing and JSON text. Knows nothing of libmsg (memcpy-bw uses it too).
#pragma once

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "viaduct/clock.hpp"
#include "viaduct/env.hpp"

namespace viaduct::bench {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

// A failed call, a corrupted payload or a bad job shape: main() prints it and exits non-zero.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A bad command line: main() prints it with a pointer to --help and exits with status 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// "4096", "512K", "16M", "1G": binary multiples, as message sizes are powers of two
// (viaduct::env::parse_size), also spelled the long way: "512KiB", "16MB".
inline std::optional<size_t> parse_size(std::string_view text) {
    std::string s(text);
    if (!s.empty() && s.back() == 'B') s.pop_back();
    if (s.size() >= 2 && s.back() == 'i' && std::strchr("kKmMgG", s[s.size() - 2]) != nullptr)
        s.pop_back();
    unsigned long long v = 0;
    if (!viaduct::env::parse_size(s.c_str(), &v)) return std::nullopt;
    return static_cast<size_t>(v);
}

inline std::optional<long> parse_long(std::string_view text) {
    if (text.empty()) return std::nullopt;
    std::string s(text);
    errno = 0;
    char *end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return std::nullopt;
    return v;
}

// Walks argv; each option may be written "--name value" or "--name=value".
class Args {
  public:
    Args(int argc, char **argv) : args_(argv + 1, argv + argc) {}

    bool done() const { return pos_ >= args_.size(); }
    std::string_view current() const { return args_[pos_]; }

    // Consumes the next argument if it is exactly the flag `name`.
    bool flag(std::string_view name) {
        if (done() || current() != name) return false;
        ++pos_;
        return true;
    }

    // Consumes the flag `name` if it is next and stores `value` in `out`.
    bool flag(std::string_view name, bool &out, bool value = true) {
        if (!flag(name)) return false;
        out = value;
        return true;
    }

    // Consumes `name` and its value if the next argument is that option.
    bool value(std::string_view name, std::string &out) {
        if (done()) return false;
        std::string_view arg = current();
        if (arg == name) {
            if (pos_ + 1 >= args_.size()) throw UsageError(std::string(name) + " needs a value");
            out = args_[pos_ + 1];
            pos_ += 2;
            return true;
        }
        if (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
            arg[name.size()] == '=') {
            out = std::string(arg.substr(name.size() + 1));
            ++pos_;
            return true;
        }
        return false;
    }

    bool size_value(std::string_view name, size_t &out) {
        std::string text;
        if (!value(name, text)) return false;
        auto v = parse_size(text);
        if (!v) throw UsageError(std::string(name) + ": '" + text + "' is not a byte count");
        out = *v;
        return true;
    }

    bool long_value(std::string_view name, long min, long max, long &out) {
        std::string text;
        if (!value(name, text)) return false;
        auto v = parse_long(text);
        if (!v || *v < min || *v > max) {
            throw UsageError(std::string(name) + ": '" + text + "' is not an integer in [" +
                             std::to_string(min) + ", " + std::to_string(max) + "]");
        }
        out = *v;
        return true;
    }

    [[noreturn]] void unknown() const {
        throw UsageError("unknown option '" + std::string(current()) + "'");
    }

  private:
    std::vector<std::string> args_;
    size_t pos_ = 0;
};

// Page-aligned, pre-faulted bytes, so first-touch page faults never land in a timed loop
// and a transport that registers memory gets whole pages.
class AlignedBuffer {
  public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(size_t bytes) : size_(bytes) {
        constexpr size_t page = 4096;
        size_t rounded = (bytes + page - 1) / page * page;
        if (rounded == 0) rounded = page;
        data_.reset(static_cast<std::byte *>(std::aligned_alloc(page, rounded)));
        if (!data_) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
        std::memset(data_.get(), 0, rounded);
    }

    std::byte *data() const { return data_.get(); }
    size_t size() const { return size_; }

  private:
    struct Free {
        void operator()(std::byte *p) const { std::free(p); }
    };
    std::unique_ptr<std::byte, Free> data_;
    size_t size_ = 0;
};

using viaduct::Clock;
using viaduct::seconds_since;

// A JSON string literal (provider names are the only free text we print).
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(ch));
            out += esc;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

// JSON has no NaN or infinity; a degenerate timing prints as null rather than invalid JSON.
inline std::string json_number(double v, int decimals) {
    if (!std::isfinite(v)) return "null";
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

}  // namespace viaduct::bench
