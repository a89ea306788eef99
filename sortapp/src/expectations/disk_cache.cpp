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
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "sortapp/disk_probe.hpp"
#include "sortapp/io_ring.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

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

// The cache's directory, opened once and checked (private to this user): the cache, its lock
// and its temporaries are opened relative to it, never through a link, so a directory another
// user made or can write (a shared /tmp/.cache) is refused rather than written into.
struct CacheDir {
    viaduct::UniqueFd fd;
    std::string dir, name;  // the directory's path (for messages) and the cache's file name
};

// False, with `why`, when the directory cannot be used; with `create`, a missing one is made
// (0700). A missing directory without `create` is an empty cache: true with an invalid fd.
bool open_cache_dir(const std::string &path, bool create, CacheDir &out, std::string &why) {
    const viaduct::PathParts where = viaduct::split_path(path);
    out.dir = where.dir;
    out.name = where.base;
    struct stat st {};
    if (!create && ::stat(out.dir.c_str(), &st) != 0 && errno == ENOENT) return true;
    out.fd = create ? viaduct::make_private_dir(out.dir, why)
                    : viaduct::open_checked_dir(out.dir, viaduct::DirTrust::private_to_user, why);
    if (!out.fd.valid()) why = "disk cache not used: " + why;
    return out.fd.valid();
}

// The cache file's text: "" when there is none; false (and `why`) when it cannot be read or is
// not a regular file of a sane size.
bool read_text(const CacheDir &d, std::string &text, std::string &why) {
    text.clear();
    if (!d.fd.valid()) return true;
    viaduct::UniqueFd fd(::openat(d.fd.get(), d.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    const std::string path = d.dir + "/" + d.name;
    if (!fd.valid()) {
        if (errno == ENOENT) return true;
        why = "cannot read the disk cache " + path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        std::uint64_t(st.st_size) > max_cache_bytes) {
        why = "disk cache " + path + " is not a regular file or is too large";
        return false;
    }
    text.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n <= 0) break;
        got += std::size_t(n);
    }
    text.resize(got);
    return true;
}

// A cache with no entries.
json empty_cache() {
    return json{{"format", cache_format}, {"version", cache_version}, {"devices", json::object()}};
}

// The whole cache: an empty object when there is no file; false (and `why`) when the file
// is there but is not one of ours.
bool load(const CacheDir &d, json &doc, std::string &why) {
    doc = empty_cache();
    std::string text;
    if (!read_text(d, text, why)) return false;
    if (text.empty()) return true;
    const std::string path = d.dir + "/" + d.name;
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

// Written beside the old file under a fresh name and renamed over it, then the directory
// synced: a reader never sees half a cache, and a power loss does not undo it.
Status store(const CacheDir &d, const json &doc) {
    const std::string why =
        viaduct::write_file_at(d.fd.get(), d.dir, d.name, doc.dump(2) + "\n", 0600);
    return why.empty() ? Status::ok() : Status::error("disk cache: " + why);
}

// Processes sharing a host (the nodes of a job on one machine) measure one after another: two
// measurements at once would each see half the disk, the very figure that makes expectations
// wrong. Bounded: a holder that never lets go delays the others, never stops them.
class CacheLock {
  public:
    CacheLock(const CacheDir &d, double timeout_s) {
        const std::string name = d.name + ".lock";
        if (d.fd.valid())
            fd_ =
                ::openat(d.fd.get(), name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(std::int64_t(timeout_s * 1000));
        while (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() > until) {
                std::fprintf(stderr, "sortapp: warning: measuring without the lock %s/%s\n",
                             d.dir.c_str(), name.c_str());
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

// The device's entry in the cache open as `dir`; false (with `warning` when the cache or the
// entry is doubtful) when there is none to use.
bool read_entry(const CacheDir &dir, const std::string &device, DiskBandwidth &out,
                std::string &warning) {
    json doc;
    if (!load(dir, doc, warning)) return false;
    const json &e = field(doc["devices"], device.c_str());
    if (e.is_null()) return false;
    std::string why;
    DiskBandwidth b;
    if (!parse_entry(e, b, why)) {
        warning = "disk cache " + dir.dir + "/" + dir.name + ": entry for device " + device +
                  " ignored: " + why;
        return false;
    }
    out = b;
    out.marked_stale = field(e, "stale") == true;
    return true;
}

// Replaces the device's entry; a malformed cache is replaced whole.
Status write_entry(const CacheDir &dir, const DiskBandwidth &figure) {
    json doc;
    std::string why;
    if (!load(dir, doc, why)) doc = empty_cache();
    doc["devices"][figure.conditions.device] = figure_json(figure);
    return store(dir, doc);
}

// The cached figure when it fits this sort: the same request size and depth, and, when a
// fresh one is asked for, a measurement that ended after `fresh_after` (by a process that
// held the lock while this one waited).
bool usable(const DiskProbeOptions &o, const CacheDir &dir, const std::string &device,
            double fresh_after, DiskBandwidth &out) {
    std::string warning;
    DiskBandwidth cached;
    const bool found = read_entry(dir, device, cached, warning);
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
    CacheDir dir;
    std::string why;
    if (!open_cache_dir(o.cache_path, true, dir, why)) {
        std::fprintf(stderr, "sortapp: warning: %s; measuring the disk without it\n", why.c_str());
        return measure_disk(o, out);
    }
    // A sound cached figure needs no lock: the cache is replaced whole by a rename, so a reader
    // sees the old file or the new one. The nodes of a job on one host then do not queue up.
    if (!o.remeasure && usable(o, dir, device, asked, out)) return Status::ok();
    // Three sweeps each bounded by max_seconds, and the probe file's setup, per waiting turn.
    CacheLock lock(dir, 4 * (3 * o.max_seconds + 5));
    // Another process may have measured while this one waited.
    if (usable(o, dir, device, asked, out)) return Status::ok();
    SORTAPP_TRY(measure_disk(o, out));
    // Kept all the same (the conditions say why it may be low): a phase that beats it later
    // marks it stale.
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && out.conditions.load_average > double(cpus))
        std::fprintf(stderr,
                     "sortapp: warning: the disk was measured at load average %.2f on %ld CPUs: "
                     "the figure may be too low\n",
                     out.conditions.load_average, cpus);
    Status s = write_entry(dir, out);
    if (!s) std::fprintf(stderr, "sortapp: warning: %s\n", s.message().c_str());
    return Status::ok();
}

bool read_disk_cache(const std::string &path, const std::string &device, DiskBandwidth &out,
                     std::string &warning) {
    warning.clear();
    CacheDir dir;
    return open_cache_dir(path, false, dir, warning) && read_entry(dir, device, out, warning);
}

Status write_disk_cache(const std::string &path, const DiskBandwidth &figure) {
    CacheDir dir;
    std::string why;
    if (!open_cache_dir(path, true, dir, why)) return Status::error(why);
    return write_entry(dir, figure);
}

Status mark_disk_cache_stale(const std::string &path, const std::string &device) {
    CacheDir dir;
    json doc;
    std::string why;
    if (!open_cache_dir(path, false, dir, why) || !load(dir, doc, why)) return Status::error(why);
    if (!dir.fd.valid()) return Status::ok();
    json &devices = doc["devices"];
    if (!devices.contains(device) || !devices[device].is_object()) return Status::ok();
    devices[device]["stale"] = true;
    return store(dir, doc);
}

std::string disk_figure_json(const DiskBandwidth &figure) {
    json j = figure_json(figure);
    j["cached"] = figure.cached;
    j["stale"] = figure.marked_stale;
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

std::string mark_stale_figure(const DiskBandwidth &used) {
    if (used.source.dir.empty()) return "figure stale (given by hand)";
    if (!used.source.cache_path.empty()) {
        Status s = mark_disk_cache_stale(used.source.cache_path, used.conditions.device);
        if (!s) std::fprintf(stderr, "sortapp: warning: %s\n", s.message().c_str());
    }
    return "figure stale: kept until sortapp probe or --remeasure measures the disk again";
}

}  // namespace sortapp
