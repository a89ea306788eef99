// The disk figures' cache: one JSON file, an entry per device holding the figures and the
// conditions they were measured under. The file is untrusted input (another version, a
// half-written file, a hand edit): every field is checked, and anything doubtful is not used.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sortapp/disk_probe.hpp"
#include "sortapp/io_ring.hpp"
#include "viaduct/path.hpp"

namespace sortapp {

namespace {

using nlohmann::json;

constexpr const char *cache_format = "viaduct-sortapp-disk";
constexpr int cache_version = 1;
constexpr std::size_t max_cache_bytes = 1 << 20;

json conditions_json(const DiskConditions &c) {
    return json{
        {"date", c.date},         {"measured_at", c.measured_at}, {"io_size", c.io_size},
        {"io_depth", c.io_depth}, {"file_bytes", c.file_bytes},   {"load_average", c.load_average},
        {"device", c.device},     {"direct", c.direct},           {"seconds", c.seconds}};
}

json figure_json(const DiskBandwidth &b) {
    return json{{"read_mb_s", b.read_mb_s},
                {"write_mb_s", b.write_mb_s},
                {"mixed_mb_s", b.mixed_mb_s},
                {"conditions", conditions_json(b.conditions)}};
}

// A member, or null when absent (a const json's operator[] must not see a missing key).
const json &field(const json &j, const char *key) {
    static const json none;
    if (!j.is_object()) return none;
    auto it = j.find(key);
    return it == j.end() ? none : *it;
}

bool positive(const json &j, const char *key, double limit = 1e12) {
    const json &v = field(j, key);
    return v.is_number() && v.get<double>() > 0 && v.get<double>() < limit;
}

bool unsigned_field(const json &j, const char *key, std::uint64_t limit) {
    const json &v = field(j, key);
    return v.is_number_unsigned() && v.get<std::uint64_t>() > 0 && v.get<std::uint64_t>() <= limit;
}

// One entry, checked field by field; false with `why` on the first doubtful one.
bool parse_entry(const json &e, DiskBandwidth &out, std::string &why) {
    if (!positive(e, "read_mb_s", 1e7) || !positive(e, "write_mb_s", 1e7) ||
        !positive(e, "mixed_mb_s", 2e7)) {
        why = "rates missing or not positive";
        return false;
    }
    const json &c = field(e, "conditions");
    if (!positive(c, "measured_at") || !unsigned_field(c, "io_size", 1ull << 32) ||
        !unsigned_field(c, "io_depth", 4096) || !unsigned_field(c, "file_bytes", 1ull << 50) ||
        !field(c, "date").is_string() || !field(c, "device").is_string() ||
        !field(c, "load_average").is_number() || !field(c, "direct").is_boolean() ||
        !field(c, "seconds").is_number()) {
        why = "conditions missing or malformed";
        return false;
    }
    out.read_mb_s = field(e, "read_mb_s").get<double>();
    out.write_mb_s = field(e, "write_mb_s").get<double>();
    out.mixed_mb_s = field(e, "mixed_mb_s").get<double>();
    DiskConditions &k = out.conditions;
    k.date = field(c, "date").get<std::string>().substr(0, 64);
    k.measured_at = field(c, "measured_at").get<double>();
    k.io_size = field(c, "io_size").get<std::uint64_t>();
    k.io_depth = unsigned(field(c, "io_depth").get<std::uint64_t>());
    k.file_bytes = field(c, "file_bytes").get<std::uint64_t>();
    k.load_average = field(c, "load_average").get<double>();
    k.device = field(c, "device").get<std::string>().substr(0, 64);
    k.direct = field(c, "direct").get<bool>();
    k.seconds = field(c, "seconds").get<double>();
    out.cached = true;
    return true;
}

// The whole cache: an empty object when there is no file; false (and `why`) when the file
// is there but is not one of ours.
bool load(const std::string &path, json &doc, std::string &why) {
    doc = json{{"format", cache_format}, {"version", cache_version}, {"devices", json::object()}};
    std::ifstream in(path, std::ios::binary);
    if (!in) return true;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > max_cache_bytes) {
        why = "disk cache " + path + " is too large";
        return false;
    }
    json parsed = json::parse(text, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object() ||
        parsed.value("format", "") != cache_format || !parsed.contains("version") ||
        parsed["version"] != cache_version || !parsed.contains("devices") ||
        !parsed["devices"].is_object()) {
        why = "disk cache " + path + " is malformed (not JSON, or not version " +
              std::to_string(cache_version) + ")";
        return false;
    }
    doc = std::move(parsed);
    return true;
}

void make_parents(const std::string &path) {
    const std::string dir = viaduct::path_dir(path);
    if (dir == "." || dir == "/") return;
    for (std::size_t p = 1; p <= dir.size(); ++p)
        if (p == dir.size() || dir[p] == '/') ::mkdir(dir.substr(0, p).c_str(), 0755);
}

// Written beside the old file and renamed over it: a reader never sees half a cache.
Status store(const std::string &path, const json &doc) {
    make_parents(path);
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << doc.dump(2) << "\n";
        out.flush();
        if (!out) {
            ::unlink(tmp.c_str());
            return Status::error("cannot write the disk cache " + tmp);
        }
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        Status s = Status::from_errno("cannot rename the disk cache to " + path, errno);
        ::unlink(tmp.c_str());
        return s;
    }
    return Status::ok();
}

// Processes sharing a host (the nodes of a job on one machine) measure one after another: two
// measurements at once would each see half the disk, the very figure that makes expectations
// wrong. Bounded: a holder that never lets go delays the others, never stops them.
class CacheLock {
  public:
    CacheLock(const std::string &cache_path, double timeout_s) {
        make_parents(cache_path);
        const std::string path = cache_path + ".lock";
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(std::int64_t(timeout_s * 1000));
        while (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() > until) {
                std::fprintf(stderr, "sortapp: warning: measuring without the lock %s\n",
                             path.c_str());
                ::close(fd_);
                fd_ = -1;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    ~CacheLock() {
        if (fd_ >= 0) ::close(fd_);  // closing releases the lock
    }
    CacheLock(const CacheLock &) = delete;
    CacheLock &operator=(const CacheLock &) = delete;

  private:
    int fd_ = -1;
};

// The cached figure when it fits this sort: the same request size and depth, and, when a
// fresh one is asked for, a measurement that ended after `fresh_after` (by a process that
// held the lock while this one waited).
bool usable(const DiskProbeOptions &o, const std::string &device, double fresh_after,
            DiskBandwidth &out) {
    std::string warning;
    DiskBandwidth cached;
    const bool found = read_disk_cache(o.cache_path, device, cached, warning);
    if (!warning.empty())
        std::fprintf(stderr, "sortapp: warning: %s; measuring the disk again\n", warning.c_str());
    const std::size_t io =
        std::max<std::size_t>(io_alignment, o.io_size / io_alignment * io_alignment);
    if (!found || cached.conditions.io_size != io || cached.conditions.io_depth != o.io_depth)
        return false;
    // Fresh: its measurement ended after this process asked (it may have begun just before).
    const DiskConditions &c = cached.conditions;
    if (o.remeasure && c.measured_at + c.seconds < fresh_after) return false;
    out = cached;
    out.source = o;
    return true;
}

double epoch_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

}  // namespace

Status probe_disk(const DiskProbeOptions &o, DiskBandwidth &out) {
    out = DiskBandwidth();
    struct stat st {};
    if (::stat(o.dir.c_str(), &st) != 0) return Status::from_errno("cannot stat " + o.dir, errno);
    if (o.cache_path.empty()) return measure_disk(o, out);
    const std::string device = std::to_string(std::uint64_t(st.st_dev));
    const double asked = epoch_now();
    // Three sweeps each bounded by max_seconds, and the probe file's setup, per waiting turn.
    CacheLock lock(o.cache_path, 4 * (3 * o.max_seconds + 5));
    if (usable(o, device, asked, out)) return Status::ok();
    SORTAPP_TRY(measure_disk(o, out));
    // Kept all the same (the conditions say why it may be low): a phase that beats it later
    // marks it stale.
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && out.conditions.load_average > double(cpus))
        std::fprintf(stderr,
                     "sortapp: warning: the disk was measured at load average %.2f on %ld CPUs: "
                     "the figure may be too low\n",
                     out.conditions.load_average, cpus);
    Status s = write_disk_cache(o.cache_path, out);
    if (!s) std::fprintf(stderr, "sortapp: warning: %s\n", s.message().c_str());
    return Status::ok();
}

bool read_disk_cache(const std::string &path, const std::string &device, DiskBandwidth &out,
                     std::string &warning) {
    warning.clear();
    json doc;
    if (!load(path, doc, warning)) return false;
    const json &e = field(doc["devices"], device.c_str());
    if (e.is_null() || field(e, "stale") == true) return false;
    std::string why;
    DiskBandwidth b;
    if (!parse_entry(e, b, why)) {
        warning = "disk cache " + path + ": entry for device " + device + " ignored: " + why;
        return false;
    }
    out = b;
    return true;
}

Status write_disk_cache(const std::string &path, const DiskBandwidth &figure) {
    json doc;
    std::string why;
    load(path, doc, why);  // a malformed cache is replaced whole
    if (!why.empty())
        doc =
            json{{"format", cache_format}, {"version", cache_version}, {"devices", json::object()}};
    doc["devices"][figure.conditions.device] = figure_json(figure);
    return store(path, doc);
}

Status mark_disk_cache_stale(const std::string &path, const std::string &device) {
    json doc;
    std::string why;
    if (!load(path, doc, why)) return Status::error(why);
    json &devices = doc["devices"];
    if (!devices.contains(device) || !devices[device].is_object()) return Status::ok();
    devices[device]["stale"] = true;
    return store(path, doc);
}

std::string disk_figure_json(const DiskBandwidth &figure) {
    json j = figure_json(figure);
    j["cached"] = figure.cached;
    return j.dump();
}

void warn_stale_figure(const std::string &phase, double actual, double expected,
                       const DiskBandwidth &used) {
    const DiskConditions &c = used.conditions;
    std::fprintf(stderr,
                 "sortapp: warning: %s took %.2f s, expected %.2f s: the disk figure (read %.0f, "
                 "write %.0f MB/s, %s%s, load %.2f) is stale\n",
                 phase.c_str(), actual, expected, used.read_mb_s, used.write_mb_s,
                 c.date.empty() ? "given by hand" : "measured ", c.date.c_str(), c.load_average);
}

std::string refresh_stale_figure(const DiskBandwidth &used, DiskBandwidth &fresh) {
    fresh = DiskBandwidth();
    if (used.source.dir.empty()) return "figure stale (given by hand)";
    if (used.source.on_stale == OnStale::remeasure_next_run) {
        Status s = used.source.cache_path.empty()
                       ? Status::ok()
                       : mark_disk_cache_stale(used.source.cache_path, used.conditions.device);
        if (!s) std::fprintf(stderr, "sortapp: warning: %s\n", s.message().c_str());
        return "figure stale: re-measured at the next run";
    }
    DiskProbeOptions o = used.source;
    o.remeasure = true;
    Status s = probe_disk(o, fresh);
    if (!s) {
        std::fprintf(stderr, "sortapp: warning: re-measuring the disk: %s\n", s.message().c_str());
        return "figure stale; re-measuring failed";
    }
    char note[160];
    std::snprintf(note, sizeof note,
                  "figure stale; re-measured: read %.0f, write %.0f, mixed %.0f MB/s",
                  fresh.read_mb_s, fresh.write_mb_s, fresh.mixed_mb_s);
    std::fprintf(stderr, "sortapp: %s\n", note);
    return note;
}

}  // namespace sortapp
