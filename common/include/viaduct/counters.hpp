// Per-process and per-host performance counters, sampled several times a second while a
// program works (the NOW-Sort paper's cpubar and diskbar), kept in a bounded ring.
//
// A CounterSample holds cumulative counters as read at one instant; rates come from the
// difference of two samples (see rates()). Every field is fixed-size so a sample travels
// between processes as it is (the sort's nodes send theirs to the monitor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace viaduct {

struct CounterSample {
    // When: CLOCK_REALTIME, microseconds since the epoch (a node's own clock; the collator
    // shifts it by the node's measured offset).
    int64_t time_us = 0;
    // What the program says of itself (Sampler::Progress): its phase (an index into the
    // program's own table of phase names) and the work done so far.
    uint32_t phase = 0;
    // The CPUs the host CPU figures are summed over: the host's online CPUs, or those this
    // process may run on when it is bound to fewer (msgrun --bind-to core): the CPUs it shares.
    uint32_t cpus = 0;
    uint64_t records = 0;
    uint64_t bytes = 0;
    // CPU time, microseconds: this process (user, system) and the whole host (user + nice,
    // system + irq + softirq, iowait, idle, steal), from /proc/self/stat and /proc/stat.
    uint64_t proc_user_us = 0;
    uint64_t proc_sys_us = 0;
    uint64_t host_user_us = 0;
    uint64_t host_sys_us = 0;
    uint64_t host_iowait_us = 0;
    uint64_t host_idle_us = 0;
    uint64_t host_steal_us = 0;
    // Disk bytes: this process's (/proc/self/io read_bytes, write_bytes) and the device's that
    // holds the program's data (/sys/block/DEV/stat sectors x 512), with the device's requests
    // in flight at this instant (its queue depth) and its busy time (io_ticks, microseconds).
    uint64_t proc_read_bytes = 0;
    uint64_t proc_write_bytes = 0;
    uint64_t dev_read_bytes = 0;
    uint64_t dev_write_bytes = 0;
    uint64_t dev_busy_us = 0;
    uint32_t dev_in_flight = 0;
    uint32_t reserved = 0;
    // Network bytes the program's messaging layer sent and received (msg_get_stats).
    uint64_t net_sent_bytes = 0;
    uint64_t net_received_bytes = 0;
    // Page faults of this process and its resident memory (/proc/self/stat).
    uint64_t major_faults = 0;
    uint64_t minor_faults = 0;
    uint64_t rss_bytes = 0;
    // CPU time (user + system, microseconds) of this job's other processes on this host whose
    // time falls on the CPUs of the host figures (JobMates): not "other processes" in the
    // rates. 0 where the program does not count them.
    uint64_t job_cpu_us = 0;
};

// What happened between two samples, as rates and shares (a later sample `b`, an earlier `a`).
struct CounterRates {
    double seconds = 0;         // b.time - a.time
    double proc_cpu = 0;        // this process's CPU, in CPUs (1.0: one CPU busy all the time)
    double proc_user = 0;       // ... of which user time, in CPUs
    double proc_sys = 0;        // ... of which system time, in CPUs
    double host_busy = 0;       // share of the host's CPU time busy (user + system), 0..1
    double host_iowait = 0;     // share of the host's CPU time in iowait, 0..1
    double host_steal = 0;      // share stolen by the hypervisor, 0..1
    double other_cpu = 0;       // share of the host's CPU time busy in processes not this
                                // job's (neither this one nor its job mates), 0..1
    double proc_read_mb_s = 0;  // MB = 10^6 bytes
    double proc_write_mb_s = 0;
    double dev_read_mb_s = 0;
    double dev_write_mb_s = 0;
    double dev_busy = 0;  // share of the time the device had a request in flight, 0..1
    double net_sent_mb_s = 0;
    double net_received_mb_s = 0;
    double major_faults_s = 0;
    double minor_faults_s = 0;
    double records_s = 0;
    double mb_s = 0;  // the program's own bytes done per second
};

// The rates between an earlier sample `a` and a later one `b`. An interval that is not positive
// gives all-zero rates; a counter that went backwards (a device that came and went, a counter
// reset) counts as 0 for that interval rather than wrapping to a huge unsigned difference.
CounterRates rates(const CounterSample &a, const CounterSample &b);

// The other processes of this process's job on this host, as its launcher started them: the
// other children of its parent (msgrun's ranks, slurmstepd's tasks, a PMIx daemon's ranks) of
// the same user, found once, when made. Their CPU time is the job's own, not a disturbance
// ("other processes") of this one. When this process is bound to fewer CPUs than the host's
// (msgrun --bind-to core), only the mates bound within its CPUs count: the host figures cover
// those CPUs only.
class JobMates {
  public:
    // Scans /proc for the mates.
    static JobMates find();
    // Their CPU time, user + system, microseconds so far; a mate that has ended keeps its last.
    uint64_t cpu_us();

  private:
    struct Mate {
        int pid = 0;
        uint64_t start_ticks = 0;  // tells the mate from a later process given its pid
        uint64_t cpu_us = 0;
    };
    std::vector<Mate> mates_;
};

// Reads the counters of this process and host now: /proc/self/stat, /proc/stat, /proc/self/io
// and, when `block_device` is not empty, /sys/block/<block_device>/stat. A file that is missing
// or unreadable leaves its fields 0 (a container without /proc/self/io, a device that went
// away); nothing throws for it. phase, records, bytes and net_* are left 0 for the caller.
CounterSample read_counters(const std::string &block_device);

// When this process started (its exec), CLOCK_REALTIME microseconds: /proc/self/stat's
// starttime (clock ticks since boot) carried over to the realtime clock, so the dynamic
// loader's work and libraries' constructors count. 0 when it cannot be read.
int64_t process_started_realtime_us();

// The /sys/block name of the whole disk holding `path` ("sda" for a file on /dev/sda2, "nvme0n1"
// for one on /dev/nvme0n1p1, "dm-0" for a logical volume), or "" when the file system there has
// no block device (tmpfs, proc, overlay) or `path` cannot be stat'ed.
std::string block_device_for(const std::string &path);

// Whether `name` can name a device under /sys/block: one path component, not "." or "..".
bool valid_block_device_name(const std::string &name);

// The parsers read_counters uses, on the text of one file each, so that their handling of odd
// but legal contents (a command name with spaces and parentheses) can be checked directly. Each
// returns false, leaving `s` unchanged, when the text is not in the expected shape.
namespace counters_parse {
// /proc/self/stat: minflt, majflt, utime, stime (clock ticks of `ticks_per_s`), rss (pages of
// `page_bytes`).
bool proc_self_stat(std::string_view text, long ticks_per_s, long page_bytes, CounterSample &s);
// /proc/stat's first "cpu" line, in clock ticks of `ticks_per_s`; with `only` not empty, the
// sum of its "cpuN" lines for the N in `only` instead (false unless each is there), and
// s.cpus becomes their number.
bool host_stat(std::string_view text, long ticks_per_s, CounterSample &s,
               const std::vector<int> &only = {});
// /proc/self/io: read_bytes and write_bytes (each left as it is when its line is missing).
bool proc_io(std::string_view text, CounterSample &s);
// /sys/block/DEV/stat: sectors read and written (x 512), requests in flight, io_ticks (ms).
bool block_stat(std::string_view text, CounterSample &s);
}  // namespace counters_parse

}  // namespace viaduct
