// The tuned protocol tables (tuning.hpp): found, opened without following a link, checked and
// parsed.
#include "protocol/tuning.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/protocol_names.hpp"
#include "viaduct/cache_dir.hpp"
#include "viaduct/env.hpp"

namespace msg {

namespace {

using nlohmann::json;

// The ranges of one table, checked: ascending sizes, known protocols, the last of every size.
bool parse_ranges(const json &ranges, std::vector<ProtocolChoice::Range> &out, std::string *why) {
    if (!ranges.is_array() || ranges.empty() || ranges.size() > kTuningMaxRanges)
        return *why = "a table's ranges are not a list of 1 to 64", false;
    out.clear();
    for (const json &r : ranges) {
        if (!r.is_array() || r.size() != 2 || !r[1].is_string())
            return *why = "a range is not [max_bytes, protocol]", false;
        const ProtocolNames *p = protocol_by_setting(r[1].get<std::string>().c_str());
        if (p == nullptr || p->protocol == MSG_PROTOCOL_AUTO)
            return *why = "unknown protocol '" + r[1].get<std::string>() + "'", false;
        size_t max = SIZE_MAX;
        if (!r[0].is_null()) {
            if (!r[0].is_number_unsigned() || r[0].get<uint64_t>() == 0)
                return *why = "a range's max_bytes is not a positive whole number", false;
            max = static_cast<size_t>(std::min<uint64_t>(r[0].get<uint64_t>(), SIZE_MAX - 1));
        }
        if (!out.empty() && max <= out.back().max_bytes)
            return *why = "the ranges are not in ascending order", false;
        if (!out.empty() && out.back().max_bytes == SIZE_MAX)
            return *why = "a range follows the one of every larger size (null)", false;
        out.push_back({max, p->protocol});
    }
    if (out.back().max_bytes != SIZE_MAX)
        return *why = "the last range does not cover every larger size (null)", false;
    return true;
}

}  // namespace

const json *tuning_member(const json &obj, const char *key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool read_tuning_file(const std::string &path, std::string &text, bool &exists, std::string *why) {
    exists = true;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        exists = errno != ENOENT;
        return !exists || (*why = std::string("cannot open it: ") + std::strerror(errno), false);
    }
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (!ok || !S_ISREG(st.st_mode))
        *why = "not a regular file", ok = false;
    else if (st.st_uid != ::geteuid() && st.st_uid != 0)
        *why = "owned by another user (uid " + std::to_string(st.st_uid) + ")", ok = false;
    else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        *why = "others may write it", ok = false;
    else if (static_cast<size_t>(st.st_size) > kTuningMaxBytes)
        *why = "larger than 1 MiB", ok = false;
    text.clear();
    char buf[65536];
    for (ssize_t n = 0; ok && (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || text.size() + static_cast<size_t>(n) > kTuningMaxBytes)
            *why = n < 0 ? std::string("cannot read it: ") + std::strerror(errno) : "too large",
            ok = false;
        else
            text.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return ok;
}

std::string tuning_path(bool *explicit_path) {
    *explicit_path = false;
    if (const char *v = viaduct::env::get("VIADUCT_TUNING")) {
        if (std::strcmp(v, "none") == 0) return "";
        *explicit_path = true;
        return v;
    }
    const std::string dir = viaduct::user_cache_dir();
    return dir.empty() ? "" : dir + "/libmsg-tuning.json";
}

bool parse_tuning(const std::string &text, const std::string &host, const std::string &provider,
                  bool restricted, TunedTable &out, std::string *why) {
    out.ranges.clear();
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return *why = "not a JSON object", false;
    const json *format = tuning_member(doc, "format"), *version = tuning_member(doc, "version");
    if (format == nullptr || *format != kTuningFormat || version == nullptr ||
        !version->is_number_integer() || *version != kTuningVersion)
        return *why = std::string("not a ") + kTuningFormat + " file of version 1", false;
    const json *tables = tuning_member(doc, "tables");
    if (tables == nullptr || !tables->is_array()) return *why = "no list of tables", false;
    const char *mode = restricted ? "restricted" : "unrestricted";
    for (const json &t : *tables) {
        const json *h = tuning_member(t, "host"), *p = tuning_member(t, "provider"),
                   *m = tuning_member(t, "mode");
        if (h == nullptr || !h->is_string() || p == nullptr || !p->is_string() || m == nullptr ||
            !m->is_string())
            return *why = "a table without a host, a provider and a mode", false;
        std::vector<ProtocolChoice::Range> ranges;
        const json *r = tuning_member(t, "ranges");
        if (r == nullptr) return *why = "a table without ranges", false;
        if (!parse_ranges(*r, ranges, why)) return false;
        if (*h != host || *p != provider || *m != mode) continue;
        out.ranges = std::move(ranges);
        const json *when = tuning_member(t, "measured_at");
        out.measured_at =
            when != nullptr && when->is_string() ? when->get<std::string>() : "an unknown date";
    }
    return true;
}

bool load_tuning(const std::string &path, const std::string &host, const std::string &provider,
                 bool restricted, TunedTable &out, std::string *why) {
    out = TunedTable();
    std::string text;
    bool exists = false;
    if (!read_tuning_file(path, text, exists, why)) return false;
    out.file_found = exists;
    return !exists || parse_tuning(text, host, provider, restricted, out, why);
}

}  // namespace msg
