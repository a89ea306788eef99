// Each collated sample as a row of documented fields, and the JSON lines and CSV made of them.
// One table (numeric_fields) names every field once; the files, the page's hover and
// docs/timeline.md's table all follow it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "timeline_detail.hpp"

namespace viaduct::timeline::detail {
namespace {

double mb(uint64_t bytes) {
    return static_cast<double>(bytes) / 1e6;
}
double num(uint64_t v) {
    return static_cast<double>(v);
}
// The host's CPUs, at least one (a sample that did not read them still divides sensibly).
double cpus(const Row &r) {
    return std::max<double>(1, r.sample->cpus);
}

const std::vector<Field> kLeading = {
    {"node", "", "the node's index in the job", 0,
     [](const Row &r) { return 0.0 + r.node->index; }},
    {"host", "", "the node's host name", 0, nullptr},
    {"t", "s", "seconds since the job's first sample (any node's)", 3,
     [](const Row &r) { return r.t; }},
    {"phase", "", "the phase the node was in (its name)", 0, nullptr},
};

const std::vector<Field> kCumulative = {
    {"time_us", "us", "the sample's time on the job's common clock (since the epoch)", 0,
     [](const Row &r) { return 0.0 + r.sample->time_us; }},
    {"cpus", "CPUs", "the host's online CPUs", 0, [](const Row &r) { return num(r.sample->cpus); }},
    {"records", "records", "records done so far", 0,
     [](const Row &r) { return num(r.sample->records); }},
    {"bytes", "bytes", "bytes done so far", 0, [](const Row &r) { return num(r.sample->bytes); }},
    {"proc_user_us", "us", "this process's user CPU time", 0,
     [](const Row &r) { return num(r.sample->proc_user_us); }},
    {"proc_sys_us", "us", "this process's system CPU time", 0,
     [](const Row &r) { return num(r.sample->proc_sys_us); }},
    {"host_user_us", "us", "the host's user + nice time, summed over its CPUs", 0,
     [](const Row &r) { return num(r.sample->host_user_us); }},
    {"host_sys_us", "us", "the host's system + irq + softirq time, summed over its CPUs", 0,
     [](const Row &r) { return num(r.sample->host_sys_us); }},
    {"host_iowait_us", "us", "the host's iowait time, summed over its CPUs", 0,
     [](const Row &r) { return num(r.sample->host_iowait_us); }},
    {"host_idle_us", "us", "the host's idle time, summed over its CPUs", 0,
     [](const Row &r) { return num(r.sample->host_idle_us); }},
    {"host_steal_us", "us", "the host's time stolen by the hypervisor, summed over its CPUs", 0,
     [](const Row &r) { return num(r.sample->host_steal_us); }},
    {"proc_read_bytes", "bytes", "bytes this process had read from storage", 0,
     [](const Row &r) { return num(r.sample->proc_read_bytes); }},
    {"proc_write_bytes", "bytes", "bytes this process had written to storage", 0,
     [](const Row &r) { return num(r.sample->proc_write_bytes); }},
    {"dev_read_bytes", "bytes", "bytes read from the device holding the data (all processes)", 0,
     [](const Row &r) { return num(r.sample->dev_read_bytes); }},
    {"dev_write_bytes", "bytes", "bytes written to that device (all processes)", 0,
     [](const Row &r) { return num(r.sample->dev_write_bytes); }},
    {"dev_busy_us", "us", "the device's busy time (a request in flight)", 0,
     [](const Row &r) { return num(r.sample->dev_busy_us); }},
    {"dev_in_flight", "requests", "the device's queue depth at the sample's instant", 0,
     [](const Row &r) { return num(r.sample->dev_in_flight); }},
    {"net_sent_bytes", "bytes", "bytes the messaging layer had sent", 0,
     [](const Row &r) { return num(r.sample->net_sent_bytes); }},
    {"net_received_bytes", "bytes", "bytes the messaging layer had received", 0,
     [](const Row &r) { return num(r.sample->net_received_bytes); }},
    {"major_faults", "faults", "this process's major page faults (a disk read each)", 0,
     [](const Row &r) { return num(r.sample->major_faults); }},
    {"minor_faults", "faults", "this process's minor page faults", 0,
     [](const Row &r) { return num(r.sample->minor_faults); }},
    {"rss_bytes", "bytes", "this process's resident memory", 0,
     [](const Row &r) { return num(r.sample->rss_bytes); }},
};

const std::vector<Field> kRates = {
    {"interval_s", "s", "time since the node's previous sample (0 on its first: rates all 0)", 3,
     [](const Row &r) { return r.rates.seconds; }},
    {"proc_cpu", "CPUs", "this process's CPU (1: one CPU busy all the interval)", 3,
     [](const Row &r) { return r.rates.proc_cpu; }},
    {"proc_user", "CPUs", "... of which user time", 3,
     [](const Row &r) { return r.rates.proc_user; }},
    {"proc_sys", "CPUs", "... of which system time", 3,
     [](const Row &r) { return r.rates.proc_sys; }},
    {"host_busy", "share", "share of the host's CPU time busy (user + system), 0..1", 4,
     [](const Row &r) { return r.rates.host_busy; }},
    {"host_iowait", "share", "share of the host's CPU time in iowait, 0..1", 4,
     [](const Row &r) { return r.rates.host_iowait; }},
    {"host_steal", "share", "share of the host's CPU time stolen by the hypervisor, 0..1", 4,
     [](const Row &r) { return r.rates.host_steal; }},
    {"other_cpu", "share", "share of the host's CPU time busy in other processes, 0..1", 4,
     [](const Row &r) { return r.rates.other_cpu; }},
    {"proc_read_mb_s", "MB/s", "this process's storage reads (MB: 10^6 bytes)", 3,
     [](const Row &r) { return r.rates.proc_read_mb_s; }},
    {"proc_write_mb_s", "MB/s", "this process's storage writes", 3,
     [](const Row &r) { return r.rates.proc_write_mb_s; }},
    {"dev_read_mb_s", "MB/s", "the data device's reads (all processes)", 3,
     [](const Row &r) { return r.rates.dev_read_mb_s; }},
    {"dev_write_mb_s", "MB/s", "the data device's writes (all processes)", 3,
     [](const Row &r) { return r.rates.dev_write_mb_s; }},
    {"dev_busy", "share", "share of the interval the device had a request in flight, 0..1", 4,
     [](const Row &r) { return r.rates.dev_busy; }},
    {"net_sent_mb_s", "MB/s", "the messaging layer's bytes sent", 3,
     [](const Row &r) { return r.rates.net_sent_mb_s; }},
    {"net_received_mb_s", "MB/s", "the messaging layer's bytes received", 3,
     [](const Row &r) { return r.rates.net_received_mb_s; }},
    {"major_faults_s", "1/s", "major page faults per second", 1,
     [](const Row &r) { return r.rates.major_faults_s; }},
    {"minor_faults_s", "1/s", "minor page faults per second", 1,
     [](const Row &r) { return r.rates.minor_faults_s; }},
    {"records_s", "records/s", "records done per second", 1,
     [](const Row &r) { return r.rates.records_s; }},
    {"mb_s", "MB/s", "the program's own bytes done per second", 3,
     [](const Row &r) { return r.rates.mb_s; }},
};

const std::vector<Field> kView = {
    {"rss_mb", "MB", "resident memory (rss_bytes / 10^6)", 1,
     [](const Row &r) { return mb(r.sample->rss_bytes); }},
    {"mb_done", "MB", "the program's bytes done so far (bytes / 10^6)", 3,
     [](const Row &r) { return mb(r.sample->bytes); }},
    {"cpu_user_pct", "%", "cpubar: this process's user time, percent of all the host's CPUs", 2,
     [](const Row &r) { return view_of(r).user; }},
    {"cpu_sys_pct", "%", "cpubar: this process's system time, percent of all the host's CPUs", 2,
     [](const Row &r) { return view_of(r).sys; }},
    {"cpu_other_pct", "%", "cpubar: other processes' busy time, percent of the host's CPUs", 2,
     [](const Row &r) { return view_of(r).other; }},
    {"cpu_iowait_pct", "%", "cpubar: iowait, percent of the host's CPUs", 2,
     [](const Row &r) { return view_of(r).iowait; }},
    {"disk_read_mb_s", "MB/s", "diskbar: the device's reads, or the process's (see below)", 3,
     [](const Row &r) { return view_of(r).disk_read; }},
    {"disk_write_mb_s", "MB/s", "diskbar: the device's writes, or the process's (see below)", 3,
     [](const Row &r) { return view_of(r).disk_write; }},
};

std::vector<Field> all_numeric() {
    std::vector<Field> all = kCumulative;
    all.insert(all.end(), kRates.begin(), kRates.end());
    all.insert(all.end(), kView.begin(), kView.end());
    return all;
}

// Whether a node's device counters move at all (a node whose data device was not found
// reports zeros there, and its disk figures come from the process's own counters).
bool device_moves(const Node &node) {
    if (node.samples.empty()) return false;
    const CounterSample &a = node.samples.front(), &b = node.samples.back();
    return a.dev_read_bytes != b.dev_read_bytes || a.dev_write_bytes != b.dev_write_bytes;
}

std::string phase_name(const Input &in, uint32_t phase) {
    return phase < in.phase_names.size() ? in.phase_names[phase] : "phase " + std::to_string(phase);
}

// A CSV field: quoted (quotes doubled) when it holds a separator, a quote or a line break.
std::string csv_field(const std::string &s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

}  // namespace

const std::vector<Field> &leading_fields() {
    return kLeading;
}

const std::vector<Field> &numeric_fields() {
    static const std::vector<Field> all = all_numeric();
    return all;
}

View view_of(const Row &row) {
    const CounterRates &r = row.rates;
    View v;
    v.user = 100 * r.proc_user / cpus(row);
    v.sys = 100 * r.proc_sys / cpus(row);
    v.other = 100 * r.other_cpu;
    v.iowait = 100 * r.host_iowait;
    v.disk_read = row.device_disk ? r.dev_read_mb_s : r.proc_read_mb_s;
    v.disk_write = row.device_disk ? r.dev_write_mb_s : r.proc_write_mb_s;
    v.net_sent = r.net_sent_mb_s;
    v.net_received = r.net_received_mb_s;
    return v;
}

std::vector<Row> rows_of(const Input &in) {
    int64_t start = std::numeric_limits<int64_t>::max();
    std::size_t count = 0;
    for (const Node &n : in.nodes) {
        for (const CounterSample &s : n.samples) start = std::min(start, s.time_us);
        count += n.samples.size();
    }
    std::vector<Row> rows;
    rows.reserve(count);
    for (const Node &n : in.nodes) {
        const bool device = device_moves(n);
        for (std::size_t i = 0; i < n.samples.size(); ++i) {
            Row row;
            row.node = &n;
            row.sample = &n.samples[i];
            if (i > 0) row.rates = rates(n.samples[i - 1], n.samples[i]);
            row.t = static_cast<double>(n.samples[i].time_us - start) / 1e6;
            row.phase = phase_name(in, n.samples[i].phase);
            row.device_disk = device;
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

std::string number_text(double v, int decimals) {
    if (!std::isfinite(v)) return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? "0" : s;
}

std::string json_string(const std::string &s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string jsonl_text(const std::vector<Row> &rows) {
    std::string out;
    for (const Row &row : rows) {
        out += "{\"node\":" + std::to_string(row.node->index) +
               ",\"host\":" + json_string(row.node->host) + ",\"t\":" + number_text(row.t, 3) +
               ",\"phase\":" + json_string(row.phase);
        for (const Field &f : numeric_fields()) {
            out += ",\"";
            out += f.name;
            out += "\":";
            out += number_text(f.value(row), f.decimals);
        }
        out += "}\n";
    }
    return out;
}

std::string csv_text(const std::vector<Row> &rows) {
    std::string out = "node,host,t,phase";
    for (const Field &f : numeric_fields()) out += std::string(",") + f.name;
    out += "\n";
    for (const Row &row : rows) {
        out += std::to_string(row.node->index) + "," + csv_field(row.node->host) + "," +
               number_text(row.t, 3) + "," + csv_field(row.phase);
        for (const Field &f : numeric_fields()) {
            out += ',';
            out += number_text(f.value(row), f.decimals);
        }
        out += "\n";
    }
    return out;
}

}  // namespace viaduct::timeline::detail
