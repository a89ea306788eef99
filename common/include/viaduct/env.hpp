// Environment variables and the number syntax every VIADUCT_* setting shares.
// One rule for all: an unset variable keeps the default; a set one that does not
// parse is an error the caller reports as "NAME=VALUE is not valid".
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace viaduct::env {

namespace detail {

// The two number syntaxes share their shape: digits, then an optional unit letter k, m, g or t
// (either case) whose power `unit_scale` gives (or 0 for none), then whatever `tail` accepts,
// then nothing. The product must fit 64 bits.
template <typename Scale, typename Tail>
bool parse_number(const char *text, unsigned long long *out, Scale unit_scale, Tail tail) {
    if (text == nullptr || *text < '0' || *text > '9') return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text) return false;
    const char *units = "kmgt";
    const char *unit = *end != '\0' ? std::strchr(units, *end | 0x20) : nullptr;
    const int power = unit != nullptr ? int(unit - units) + 1 : 0;
    if (unit != nullptr) ++end;
    const unsigned long long mult = unit_scale(power, end);
    tail(power, end);
    if (*end != '\0' || v > ~0ull / mult) return false;
    *out = v * mult;
    return true;
}

}  // namespace detail

// A non-negative integer with an optional binary suffix, nothing after it: K, M, G or T
// (either case) for 2^10, 2^20, 2^30, 2^40, each also spelled KiB, MiB, GiB, TiB or KB, MB,
// GB, TB (binary too), or a bare B for bytes. "16KiB", "16K", "16KB", "1g".
inline bool parse_size(const char *text, unsigned long long *out) {
    return detail::parse_number(
        text, out, [](int power, const char *) { return 1ull << (10 * power); },
        [](int power, char *&end) {
            if (power > 0 && *end == 'i' && (end[1] == 'B' || end[1] == 'b'))
                end += 2;
            else if (*end == 'B' || *end == 'b')
                ++end;
        });
}

// A count of things (records, not bytes): a non-negative integer with an optional decimal
// suffix, k, M, G or T (either case) for 10^3, 10^6, 10^9, 10^12, as people count records
// ("1M records" is a million); Ki, Mi, Gi, Ti for the powers of 2. "4000", "4k", "4Ki".
inline bool parse_count(const char *text, unsigned long long *out) {
    return detail::parse_number(
        text, out,
        [](int power, const char *end) {
            unsigned long long mult = 1;
            for (int i = 0; i < power; ++i) mult *= *end == 'i' ? 1024 : 1000;
            return mult;
        },
        [](int power, char *&end) {
            if (power > 0 && *end == 'i') ++end;
        });
}

// On/off: "0" is off, any other text on.
inline bool parse_bool(const char *text) {
    return std::strcmp(text, "0") != 0;
}

// The variable's text; null when unset, and when empty if empty_is_unset.
inline const char *get(const char *name, bool empty_is_unset = true) {
    const char *v = std::getenv(name);
    return v != nullptr && empty_is_unset && *v == '\0' ? nullptr : v;
}

// The variable as a string; `fallback` when unset or empty.
inline std::string text(const char *name, const std::string &fallback = {}) {
    const char *v = get(name);
    return v != nullptr ? std::string(v) : fallback;
}

// The variable as a size (parse_size's syntax): nullopt when unset or empty;
// *valid is false when it is set but does not parse.
inline std::optional<unsigned long long> size(const char *name, bool *valid) {
    *valid = true;
    const char *v = get(name);
    if (v == nullptr) return std::nullopt;
    unsigned long long n = 0;
    if (!parse_size(v, &n)) {
        *valid = false;
        return std::nullopt;
    }
    return n;
}

// The variable as a whole number >= 1 (no suffix): `fallback` when unset, empty or not one.
inline long positive(const char *name, long fallback) {
    const char *v = get(name);
    if (v == nullptr) return fallback;
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(v, &end, 10);
    return errno == 0 && end != v && *end == '\0' && n >= 1 ? n : fallback;
}

// The variable as on/off (parse_bool): `fallback` when unset.
inline bool flag(const char *name, bool fallback) {
    const char *v = get(name, false);
    return v != nullptr ? parse_bool(v) : fallback;
}

}  // namespace viaduct::env
