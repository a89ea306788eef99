// Reads the per-process and per-host counters from /proc and /sys, and turns two samples into
// rates (the NOW-Sort paper's cpubar and diskbar figures).
#include "viaduct/counters.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

namespace viaduct {

namespace {

// A counter's growth from `a` to `b`; one that went backwards grew by nothing.
uint64_t growth(uint64_t a, uint64_t b) {
    return b >= a ? b - a : 0;
}

double share(uint64_t part, uint64_t whole) {
    if (whole == 0) return 0;
    return std::clamp(static_cast<double>(part) / static_cast<double>(whole), 0.0, 1.0);
}

// Host CPU shares from the growth of /proc/stat's times, all summed over the host's CPUs.
void host_shares(const CounterSample &a, const CounterSample &b, CounterRates &r) {
    const uint64_t user = growth(a.host_user_us, b.host_user_us);
    const uint64_t sys = growth(a.host_sys_us, b.host_sys_us);
    const uint64_t iowait = growth(a.host_iowait_us, b.host_iowait_us);
    const uint64_t idle = growth(a.host_idle_us, b.host_idle_us);
    const uint64_t steal = growth(a.host_steal_us, b.host_steal_us);
    const uint64_t total = user + sys + iowait + idle + steal;
    const uint64_t busy = user + sys;
    // This process's time and its job mates' (JobMates): the job's own, not a disturbance.
    const uint64_t mine = growth(a.proc_user_us, b.proc_user_us) +
                          growth(a.proc_sys_us, b.proc_sys_us) + growth(a.job_cpu_us, b.job_cpu_us);
    r.host_busy = share(busy, total);
    r.host_iowait = share(iowait, total);
    r.host_steal = share(steal, total);
    // The host's and the processes' times are read a moment apart, so the job can appear to
    // have used more than the host was busy; the others' share is then none.
    r.other_cpu = share(busy > mine ? busy - mine : 0, total);
}

// Microseconds from clock ticks, without overflowing for any tick count /proc can hold.
uint64_t ticks_to_us(uint64_t ticks, long ticks_per_s) {
    const auto hz = static_cast<uint64_t>(ticks_per_s);
    return ticks / hz * 1000000 + ticks % hz * 1000000 / hz;
}

// The unsigned decimal numbers of `text`, separated by spaces, into `out`; false when fewer
// than out.size() are there or one is not a number.
template <std::size_t N>
bool parse_fields(std::string_view text, std::array<uint64_t, N> &out) {
    const char *p = text.data();
    const char *end = p + text.size();
    for (uint64_t &field : out) {
        while (p < end && (*p == ' ' || *p == '\t')) ++p;
        const auto [next, ec] = std::from_chars(p, end, field);
        if (ec != std::errc() || (next < end && *next != ' ' && *next != '\t' && *next != '\n'))
            return false;
        p = next;
    }
    return true;
}

// `text` after its first `count` space-separated fields; empty when there are no more.
std::string_view skip_fields(std::string_view text, int count) {
    for (int i = 0; i < count; ++i) {
        const auto start = text.find_first_not_of(' ');
        if (start == std::string_view::npos) return {};
        text.remove_prefix(std::min(text.find(' ', start), text.size()));
    }
    return text;
}

// The value of a "key: value" line of `text` whose key is exactly `key`.
bool keyed_value(std::string_view text, std::string_view key, uint64_t &value) {
    std::size_t at = 0;
    while (at < text.size()) {
        const auto eol = std::min(text.find('\n', at), text.size());
        const std::string_view line = text.substr(at, eol - at);
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == ':') {
            std::array<uint64_t, 1> v{};
            if (!parse_fields(line.substr(key.size() + 1), v)) return false;
            value = v[0];
            return true;
        }
        at = eol + 1;
    }
    return false;
}

// The start of a small file (the first read of a /proc or /sys file holds it whole), or ""
// when it cannot be opened or read: a missing counter file is a counter that reads 0.
std::string read_small_file(const char *path, std::size_t limit = 4096) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string text(limit, '\0');
    ssize_t n;
    do {
        n = ::read(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
}

long sysconf_or(int name, long fallback) {
    const long v = ::sysconf(name);
    return v > 0 ? v : fallback;
}

// Whether this thread may run on fewer CPUs than the host's `online` ones (a rank bound to its
// own, as by msgrun --bind-to core), with those CPUs in `set`.
bool bound_set(long online, cpu_set_t &set) {
    CPU_ZERO(&set);
    return ::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < online;
}

// bound_set's CPUs by number; empty when this thread may run on all of the host's.
std::vector<int> bound_cpus(long online) {
    cpu_set_t set;
    if (!bound_set(online, set)) return {};
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

}  // namespace

CounterRates rates(const CounterSample &a, const CounterSample &b) {
    CounterRates r;
    if (b.time_us <= a.time_us) return r;
    r.seconds = static_cast<double>(b.time_us - a.time_us) / 1e6;
    const auto per_s = [&](uint64_t from, uint64_t to) {
        return static_cast<double>(growth(from, to)) / r.seconds;
    };
    const auto mb_s = [&](uint64_t from, uint64_t to) { return per_s(from, to) / 1e6; };
    r.proc_user = per_s(a.proc_user_us, b.proc_user_us) / 1e6;
    r.proc_sys = per_s(a.proc_sys_us, b.proc_sys_us) / 1e6;
    r.proc_cpu = r.proc_user + r.proc_sys;
    host_shares(a, b, r);
    r.proc_read_mb_s = mb_s(a.proc_read_bytes, b.proc_read_bytes);
    r.proc_write_mb_s = mb_s(a.proc_write_bytes, b.proc_write_bytes);
    r.dev_read_mb_s = mb_s(a.dev_read_bytes, b.dev_read_bytes);
    r.dev_write_mb_s = mb_s(a.dev_write_bytes, b.dev_write_bytes);
    // io_ticks and the wall clock are read a moment apart: the share is capped at all the time.
    r.dev_busy = std::min(1.0, per_s(a.dev_busy_us, b.dev_busy_us) / 1e6);
    r.net_sent_mb_s = mb_s(a.net_sent_bytes, b.net_sent_bytes);
    r.net_received_mb_s = mb_s(a.net_received_bytes, b.net_received_bytes);
    r.major_faults_s = per_s(a.major_faults, b.major_faults);
    r.minor_faults_s = per_s(a.minor_faults, b.minor_faults);
    r.records_s = per_s(a.records, b.records);
    r.mb_s = mb_s(a.bytes, b.bytes);
    return r;
}

namespace counters_parse {

bool proc_self_stat(std::string_view text, long ticks_per_s, long page_bytes, CounterSample &s) {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses of its own, so the
    // fields are counted from the last ')'.
    const auto close = text.rfind(')');
    if (close == std::string_view::npos || ticks_per_s <= 0 || page_bytes <= 0) return false;
    // After ')': state ppid pgrp session tty_nr tpgid flags (tpgid may be -1), then minflt
    // cminflt majflt cmajflt utime stime (fields 10 to 15 of proc(5)); rss is field 24, past
    // priority and nice, which may be negative and are skipped unread.
    const std::string_view faults_and_times = skip_fields(text.substr(close + 1), 7);
    const std::string_view rss = skip_fields(text.substr(close + 1), 21);
    std::array<uint64_t, 6> f{};
    std::array<uint64_t, 1> pages{};
    if (!parse_fields(faults_and_times, f) || !parse_fields(rss, pages)) return false;
    s.minor_faults = f[0];
    s.major_faults = f[2];
    s.proc_user_us = ticks_to_us(f[4], ticks_per_s);
    s.proc_sys_us = ticks_to_us(f[5], ticks_per_s);
    s.rss_bytes = pages[0] * static_cast<uint64_t>(page_bytes);
    return true;
}

bool host_stat(std::string_view text, long ticks_per_s, CounterSample &s,
               const std::vector<int> &only) {
    if (text.substr(0, 4) != "cpu " || ticks_per_s <= 0) return false;
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    std::array<uint64_t, 8> f{};
    if (only.empty()) {
        if (!parse_fields(text.substr(4), f)) return false;
    } else {
        // The "cpuN" lines of the CPUs in `only`, each counted once and every one found.
        std::vector<bool> seen(only.size(), false);
        std::size_t found = 0;
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = std::min(text.find('\n', at), text.size());
            const std::string_view line = text.substr(at, end - at);
            at = end + 1;
            if (line.substr(0, 3) != "cpu" || line.size() < 4 || line[3] < '0' || line[3] > '9')
                continue;
            int cpu = -1;
            const auto [next, ec] =
                std::from_chars(line.data() + 3, line.data() + line.size(), cpu);
            const auto k = std::find(only.begin(), only.end(), cpu) - only.begin();
            if (ec != std::errc() || static_cast<std::size_t>(k) == only.size() || seen[k])
                continue;
            std::array<uint64_t, 8> g{};
            if (!parse_fields(line.substr(static_cast<std::size_t>(next - line.data())), g))
                return false;
            for (std::size_t i = 0; i < f.size(); ++i) f[i] += g[i];
            seen[k] = true;
            ++found;
        }
        if (found != only.size()) return false;
    }
    s.host_user_us = ticks_to_us(f[0] + f[1], ticks_per_s);
    s.host_sys_us = ticks_to_us(f[2] + f[5] + f[6], ticks_per_s);
    s.host_idle_us = ticks_to_us(f[3], ticks_per_s);
    s.host_iowait_us = ticks_to_us(f[4], ticks_per_s);
    s.host_steal_us = ticks_to_us(f[7], ticks_per_s);
    s.cpus = static_cast<uint32_t>(only.empty() ? s.cpus : only.size());
    return true;
}

bool proc_io(std::string_view text, CounterSample &s) {
    uint64_t read = s.proc_read_bytes;
    uint64_t write = s.proc_write_bytes;
    const bool found_read = keyed_value(text, "read_bytes", read);
    const bool found_write = keyed_value(text, "write_bytes", write);
    if (!found_read && !found_write) return false;
    s.proc_read_bytes = read;
    s.proc_write_bytes = write;
    return true;
}

bool block_stat(std::string_view text, CounterSample &s) {
    // reads merges sectors ticks, writes merges sectors ticks, in_flight io_ticks ...
    std::array<uint64_t, 10> f{};
    if (!parse_fields(text, f)) return false;
    s.dev_read_bytes = f[2] * 512;
    s.dev_write_bytes = f[6] * 512;
    s.dev_in_flight = static_cast<uint32_t>(std::min<uint64_t>(f[8], UINT32_MAX));
    s.dev_busy_us = f[9] * 1000;
    return true;
}

}  // namespace counters_parse

bool valid_block_device_name(const std::string &name) {
    return !name.empty() && name.size() < 256 && name != "." && name != ".." &&
           name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

CounterSample read_counters(const std::string &block_device) {
    static const long ticks_per_s = sysconf_or(_SC_CLK_TCK, 100);
    static const long page_bytes = sysconf_or(_SC_PAGESIZE, 4096);
    CounterSample s;
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    s.time_us = static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
    s.cpus = static_cast<uint32_t>(sysconf_or(_SC_NPROCESSORS_ONLN, 1));
    // A file that is missing or not as expected leaves its fields 0; the other files still
    // count.
    counters_parse::proc_self_stat(read_small_file("/proc/self/stat"), ticks_per_s, page_bytes, s);
    // A process bound to some CPUs shares only those: the host figures are theirs. Their
    // lines come before /proc/stat's long interrupt lines, within 64 KiB up to ~1000 CPUs.
    const std::vector<int> bound = bound_cpus(s.cpus);
    counters_parse::host_stat(read_small_file("/proc/stat", bound.empty() ? 4096 : 65536),
                              ticks_per_s, s, bound);
    counters_parse::proc_io(read_small_file("/proc/self/io"), s);
    if (valid_block_device_name(block_device)) {
        const std::string path = "/sys/block/" + block_device + "/stat";
        counters_parse::block_stat(read_small_file(path.c_str()), s);
    }
    return s;
}

namespace {

// From a /proc/PID/stat line: ppid (field 4), utime and stime (14, 15, clock ticks) and
// starttime (22), counted from the last ')' as in proc_self_stat. False when not that shape.
bool mate_stat(std::string_view text, uint64_t &ppid, uint64_t &cpu_ticks, uint64_t &start) {
    const auto close = text.rfind(')');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = text.substr(close + 1);
    std::array<uint64_t, 1> parent{}, started{};
    std::array<uint64_t, 2> times{};
    if (!parse_fields(skip_fields(rest, 1), parent) ||
        !parse_fields(skip_fields(rest, 11), times) ||
        !parse_fields(skip_fields(rest, 19), started))
        return false;
    ppid = parent[0];
    cpu_ticks = times[0] + times[1];
    start = started[0];
    return true;
}

// Whether every CPU of `theirs` is in `mine`.
bool within(const cpu_set_t &theirs, const cpu_set_t &mine) {
    cpu_set_t both;
    CPU_AND(&both, &theirs, &mine);
    return CPU_EQUAL(&both, &theirs);
}

}  // namespace

JobMates JobMates::find() {
    JobMates m;
    const pid_t self = ::getpid();
    const pid_t parent = ::getppid();
    if (parent <= 1) return m;  // no launcher: started by init, or orphaned
    const long ticks_per_s = sysconf_or(_SC_CLK_TCK, 100);
    cpu_set_t mine;
    const bool bound = bound_set(sysconf_or(_SC_NPROCESSORS_ONLN, 1), mine);
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        int pid = 0;
        const auto [end, perr] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (perr != std::errc() || end != name.data() + name.size() || pid == self) continue;
        struct stat st {};
        if (::stat(entry.path().c_str(), &st) != 0 || st.st_uid != ::getuid()) continue;
        uint64_t ppid = 0, ticks = 0, start = 0;
        if (!mate_stat(read_small_file((entry.path() / "stat").c_str()), ppid, ticks, start) ||
            ppid != static_cast<uint64_t>(parent))
            continue;
        cpu_set_t theirs;
        CPU_ZERO(&theirs);
        if (bound &&
            (::sched_getaffinity(pid, sizeof theirs, &theirs) != 0 || !within(theirs, mine)))
            continue;
        m.mates_.push_back({pid, start, ticks_to_us(ticks, ticks_per_s)});
    }
    return m;
}

uint64_t JobMates::cpu_us() {
    static const long ticks_per_s = sysconf_or(_SC_CLK_TCK, 100);
    uint64_t sum = 0;
    for (Mate &mate : mates_) {
        const std::string path = "/proc/" + std::to_string(mate.pid) + "/stat";
        uint64_t ppid = 0, ticks = 0, start = 0;
        if (mate_stat(read_small_file(path.c_str()), ppid, ticks, start) &&
            start == mate.start_ticks)
            mate.cpu_us = std::max(mate.cpu_us, ticks_to_us(ticks, ticks_per_s));
        sum += mate.cpu_us;
    }
    return sum;
}

int64_t process_started_realtime_us() {
    uint64_t ppid = 0, ticks = 0, start = 0;
    const long ticks_per_s = sysconf_or(_SC_CLK_TCK, 100);
    timespec boot{}, real{};
    if (!mate_stat(read_small_file("/proc/self/stat"), ppid, ticks, start) ||
        ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || ::clock_gettime(CLOCK_REALTIME, &real) != 0)
        return 0;
    const int64_t since_boot_us = int64_t(boot.tv_sec) * 1000000 + boot.tv_nsec / 1000;
    const auto started_us = static_cast<int64_t>(ticks_to_us(start, ticks_per_s));
    return int64_t(real.tv_sec) * 1000000 + real.tv_nsec / 1000 - (since_boot_us - started_us);
}

std::string block_device_for(const std::string &path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    // Major 0 is the kernel's anonymous devices: tmpfs, proc, overlay and the like.
    if (major(st.st_dev) == 0) return {};
    const std::string link = "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                             std::to_string(minor(st.st_dev));
    std::error_code ec;
    std::filesystem::path dev = std::filesystem::canonical(link, ec);
    if (ec) return {};
    // A partition's directory sits inside its disk's; only the disk has the request queue
    // whose stat file tells how busy the device is.
    if (std::filesystem::exists(dev / "partition", ec)) dev = dev.parent_path();
    const std::string name = dev.filename().string();
    if (!valid_block_device_name(name)) return {};
    if (::access(("/sys/block/" + name + "/stat").c_str(), R_OK) != 0) return {};
    return name;
}

}  // namespace viaduct
