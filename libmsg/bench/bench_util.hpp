// Plumbing shared by the benchmark programs: errors, the command line, size strings, aligned
// buffers, timing and JSON documents. Knows nothing of libmsg (memcpy-bw uses it too).
#pragma once

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "viaduct/cli.hpp"
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

// "4096", "512K", "16MiB", "1G": viaduct::env::parse_size, the one size syntax of every
// tool and VIADUCT_* setting (binary multiples: message sizes are powers of two).
inline std::optional<size_t> parse_size(std::string_view text) {
    unsigned long long v = 0;
    if (!viaduct::env::parse_size(std::string(text).c_str(), &v)) return std::nullopt;
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

// A whole-number option in [min, max].
inline CLI::Option *add_long(CLI::App &app, const std::string &name, long &out, long min, long max,
                             const std::string &description) {
    return app.add_option(name, out, description)->check(CLI::Range(min, max))->type_name("N");
}

// The benchmarks' command line (viaduct::cli): description, --help, --version, and the
// options `add` registers. Returns -1 to go on, else the exit status; only `speak` prints.
template <typename Options, typename Add>
int parse_command_line(const char *name, const char *description, int argc, char **argv, Options &o,
                       Add add, bool speak) {
    CLI::App app;
    viaduct::cli::setup(app, name);
    app.description(description);
    add(app, o);
    app.footer(viaduct::cli::size_syntax);
    if (int rc = viaduct::cli::parse(app, argc, argv, speak); rc >= 0) return rc;
    try {
        o.check();
    } catch (const UsageError &e) {
        if (speak) viaduct::cli::usage_error(name, e.what());
        return viaduct::cli::exit_usage;
    }
    return -1;
}

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

// The benchmarks' JSON documents, keys in the order written.
using Json = nlohmann::ordered_json;

// A figure rounded to `decimals` places; JSON has no NaN or infinity, so a degenerate timing
// is null rather than invalid JSON.
inline Json json_number(double v, int decimals) {
    if (!std::isfinite(v)) return nullptr;
    const double scale = std::pow(10.0, decimals);
    return std::round(v * scale) / scale;
}

// One document on one line of standard output.
inline void print_json(const Json &doc) {
    std::puts(doc.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
}

}  // namespace viaduct::bench
