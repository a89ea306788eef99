// Small helpers shared by the command-line tools: option values and the record format options.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sortapp/record_format.hpp"

namespace sortapp::cli {

// Exit codes: 0 success, 1 a check failed (sortcheck), 2 bad usage or an error.
inline constexpr int exit_error = 2;

[[noreturn]] inline void fail(const std::string &tool, const std::string &message) {
    std::fprintf(stderr, "%s: %s\n", tool.c_str(), message.c_str());
    std::exit(exit_error);
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
