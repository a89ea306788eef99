// Small helpers shared by the command-line tools: option values and the record format options.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "sortapp/record_format.hpp"
#include "viaduct/cli.hpp"

namespace sortapp::cli {

// Exit codes: 0 success, 1 a check failed (sortcheck), 2 bad usage or an error.
inline constexpr int exit_error = 2;

[[noreturn]] inline void fail(const std::string &tool, const std::string &message) {
    std::fprintf(stderr, "%s: %s\n", tool.c_str(), message.c_str());
    std::exit(exit_error);
}

// A problem with the command line found after parsing: one line, exit 2 (viaduct::cli).
[[noreturn]] inline void usage_fail(const std::string &tool, const std::string &message) {
    viaduct::cli::usage_error(tool, message);
    std::exit(viaduct::cli::exit_usage);
}

// One JSON document on one line; bytes of a path that are not UTF-8 become U+FFFD rather
// than an exception.
inline std::string dump(const nlohmann::ordered_json &doc) {
    return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// --record-size / --key-size as SIZE options of `app`.
inline void add_format_options(CLI::App &app, RecordFormat &format) {
    viaduct::cli::add_size(app, "--record-size", format.record_size,
                           "bytes per record (default 100)", 1);
    viaduct::cli::add_size(app, "--key-size", format.key_size,
                           "key bytes at the front of each record (default 10)", 1);
}

// For "--name VALUE" and "--name=VALUE": true when argv[i] is that option; value set and i
// advanced past it.
inline bool option(const std::string &tool, int argc, char **argv, int &i, const char *name,
                   std::string &value) {
    std::string a = argv[i], n = name;
    if (a == n) {
        if (i + 1 >= argc) fail(tool, "option " + n + " needs a value");
        value = argv[++i];
        return true;
    }
    if (a.rfind(n + "=", 0) == 0) {
        value = a.substr(n.size() + 1);
        return true;
    }
    return false;
}

inline std::uint64_t size_value(const std::string &tool, const std::string &name,
                                const std::string &text) {
    std::uint64_t v = 0;
    Status s = parse_size(text, v);
    if (!s) fail(tool, name + ": " + s.message());
    return v;
}

// --record-size / --key-size; true when argv[i] was one of them.
inline bool format_option(const std::string &tool, int argc, char **argv, int &i,
                          RecordFormat &format) {
    std::string v;
    if (option(tool, argc, argv, i, "--record-size", v)) {
        format.record_size = std::size_t(size_value(tool, "--record-size", v));
        return true;
    }
    if (option(tool, argc, argv, i, "--key-size", v)) {
        format.key_size = std::size_t(size_value(tool, "--key-size", v));
        return true;
    }
    return false;
}

}  // namespace sortapp::cli
