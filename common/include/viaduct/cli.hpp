// The command line every installed viaduct program shares: CLI11 with GNU conventions
// (--name=value, --name value, -n4, -n 4), --help (full usage on stdout, exit 0), --version
// ("TOOL (viaduct) X.Y.Z", exit 0), and a bad command line as ONE line on stderr naming the
// option, with a pointer to --help, exit 2. Sizes use env::parse_size, the syntax of every
// VIADUCT_* setting, so "16K" means the same on a command line as in the environment.
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "viaduct/env.hpp"

#ifndef VIADUCT_VERSION
#error "VIADUCT_VERSION comes from meson (viaduct_cli_dep)"
#endif

namespace viaduct::cli {

// Exit status of a bad command line (GNU and BSD sysexits both use 2 for "usage").
inline constexpr int exit_usage = 2;

// What every --help says about SIZE values.
inline constexpr const char *size_syntax =
    "SIZE: a whole number of bytes with an optional binary suffix: K or KiB (1024), M or MiB,\n"
    "G or GiB, T or TiB; the letter in either case (4k = 4K = 4KiB = 4096).\n";

// "TOOL (viaduct) X.Y.Z": --version's line.
inline std::string version_line(const std::string &tool) {
    return tool + " (viaduct) " + VIADUCT_VERSION;
}

// --help and --version on `app`, and the size syntax under the option list.
inline void setup(CLI::App &app, const std::string &tool) {
    app.name(tool);
    // GNU: an option given twice takes its last value (CLI11's default is an error).
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.set_version_flag("--version", version_line(tool), "print the version and exit");
    app.set_help_flag("-h,--help", "print this help and exit");
    app.get_formatter()->column_width(34);
}

// One line: "TOOL: message; try 'TOOL --help'", newlines in CLI11's text folded.
inline void usage_error(const std::string &tool, std::string message) {
    for (char &c : message)
        if (c == '\n') c = ' ';
    while (!message.empty() && message.back() == ' ') message.pop_back();
    std::fprintf(stderr, "%s: %s; try '%s --help'\n", tool.c_str(), message.c_str(), tool.c_str());
}

// "unknown option --x" or "unexpected argument y" for the first argument no option took.
inline std::optional<std::string> extra_problem(const CLI::App &app) {
    std::vector<std::string> extra = app.remaining(true);
    for (const std::string &a : extra)
        if (a.size() > 1 && a[0] == '-') return "unknown option " + a;
    if (!extra.empty()) return "unexpected argument '" + extra.front() + "'";
    return std::nullopt;
}

// Prints the CLI11 error being handled as one usage line; returns exit_usage.
inline int report_parse_error(const CLI::App &app) {
    try {
        throw;
    } catch (const CLI::RequiredError &e) {
        // CLI11 checks required arguments before unknown ones; an unknown option is the
        // likelier mistake ("--recrods 5 out" leaves RECORDS missing), so it is named first.
        usage_error(app.get_name(), extra_problem(app).value_or(e.what()));
    } catch (const CLI::ExtrasError &e) {
        usage_error(app.get_name(), extra_problem(app).value_or(e.what()));
    } catch (const CLI::ParseError &e) {
        usage_error(app.get_name(), e.what());
    }
    return exit_usage;
}

// Parses argv into `app`. Returns -1 to go on, or the status to exit with: 0 after --help or
// --version (printed on stdout), exit_usage after a bad command line (one line on stderr).
// Nothing is printed unless `speak` (all ranks of a job but the first keep quiet).
inline int parse(CLI::App &app, int argc, char **argv, bool speak = true) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success &e) {
        return speak ? app.exit(e) : 0;
    } catch (const CLI::ParseError &) {
        return speak ? report_parse_error(app) : exit_usage;
    }
    return -1;
}

// A size per env::parse_size in [lo, hi], or nullopt.
inline std::optional<unsigned long long> size(const std::string &text, unsigned long long lo = 0,
                                              unsigned long long hi = ~0ull) {
    unsigned long long v = 0;
    if (!env::parse_size(text.c_str(), &v) || v < lo || v > hi) return std::nullopt;
    return v;
}

// The error text for a value of `name` that is not a size in [lo, hi].
inline std::string size_problem(const std::string &name, const std::string &text,
                                unsigned long long lo, unsigned long long hi) {
    unsigned long long v = 0;
    if (!env::parse_size(text.c_str(), &v))
        return name + ": '" + text + "' is not a size (e.g. 4096, 16K, 16KiB, 1G)";
    if (v < lo) return name + ": " + text + " is below the least, " + std::to_string(lo);
    return name + ": " + text + " is above the most, " + std::to_string(hi);
}

namespace detail {

// An option whose text `parse(shown_name, text)` turns into a number, or rejects by throwing
// CLI::ValidationError (a usage error naming the option).
template <typename T, typename Parse>
CLI::Option *add_parsed(CLI::App &app, const std::string &names, T &target,
                        const std::string &description, const char *type, Parse parse) {
    std::string shown = names.substr(names.rfind(',') + 1);
    auto set = [&target, shown, parse](const std::string &text) {
        target = static_cast<T>(parse(shown, text));
    };
    return app.add_option_function<std::string>(names, set, description)->type_name(type);
}

}  // namespace detail

// A SIZE option: `names` as CLI11 takes them ("-m,--memory"); a bad value is a usage error
// naming the option's long name.
template <typename T>
CLI::Option *add_size(CLI::App &app, const std::string &names, T &target,
                      const std::string &description, unsigned long long lo = 0,
                      unsigned long long hi = std::numeric_limits<T>::max()) {
    return detail::add_parsed(app, names, target, description, "SIZE",
                              [lo, hi](const std::string &shown, const std::string &text) {
                                  auto v = size(text, lo, hi);
                                  if (!v)
                                      throw CLI::ValidationError(size_problem(shown, text, lo, hi));
                                  return *v;
                              });
}

// What every --help with a COUNT option says about it.
inline constexpr const char *count_syntax =
    "COUNT: a whole number with an optional decimal suffix: k (1000), M (10^6), G, T; Ki, Mi,\n"
    "Gi, Ti for powers of 2 (4k = 4000, 4Ki = 4096).\n";

// A COUNT option or argument (records, not bytes: env::parse_count, 1M = 10^6); a bad value
// is a usage error naming it.
template <typename T>
CLI::Option *add_count(CLI::App &app, const std::string &names, T &target,
                       const std::string &description, unsigned long long lo = 0,
                       unsigned long long hi = std::numeric_limits<T>::max()) {
    return detail::add_parsed(
        app, names, target, description, "COUNT",
        [lo, hi](const std::string &shown, const std::string &text) {
            unsigned long long v = 0;
            if (!env::parse_count(text.c_str(), &v))
                throw CLI::ValidationError(shown + ": '" + text +
                                           "' is not a count (e.g. 5000, 10k, 1M, 4Ki)");
            if (v < lo || v > hi)
                throw CLI::ValidationError(shown + ": " + text + " is outside " +
                                           std::to_string(lo) + " to " + std::to_string(hi));
            return v;
        });
}

// A decimal number option in [lo, hi] (a rate, a fraction); `unit` ends the error for a value
// out of range ("samples a second"). A bad value is a usage error naming the option.
template <typename T>
CLI::Option *add_number(CLI::App &app, const std::string &names, T &target,
                        const std::string &description, double lo, double hi,
                        const std::string &unit, const char *type = "NUMBER") {
    return detail::add_parsed(
        app, names, target, description, type,
        [lo, hi, unit](const std::string &shown, const std::string &text) {
            char *end = nullptr;
            errno = 0;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end == text.c_str() || *end != '\0' || errno != 0 ||
                !std::isfinite(v))
                throw CLI::ValidationError(shown + ": '" + text + "' is not a number");
            if (v < lo || v > hi) {
                std::ostringstream range;
                range << shown << ": " << text << " is outside " << lo << " to " << hi << ' '
                      << unit;
                throw CLI::ValidationError(range.str());
            }
            return v;
        });
}

// Whether progress lines belong on stderr: a terminal that a person watches.
inline bool stderr_is_terminal() {
    return isatty(STDERR_FILENO) == 1;
}

}  // namespace viaduct::cli
