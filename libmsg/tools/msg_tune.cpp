// msg-tune: measures which long-message protocol moves each size fastest on this host, in each
// mode, and writes the tuning file (libmsg/src/protocol/tuning.hpp) that VIADUCT_PROTOCOL=auto
// then takes its table from. It runs 2-rank jobs under msgrun (found beside it), one per
// protocol and mode, in alternating rounds; each job times a ping-pong and a two-way exchange
// per size (this same program, --measure), and the protocol with the least total time, by the
// median of the rounds, moves that size.
#include <fcntl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "msg/msg.h"
#include "protocol/protocol_choice.hpp"
#include "protocol/tuning.hpp"
#include "viaduct/cache_dir.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/fatal.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const char *kDescription =
    "msg-tune [OPTIONS]\n\n"
    "Measures, on this host, which long-message protocol (sendrecv, rdma, rdma-write) moves\n"
    "each message size fastest, in unrestricted and in restricted mode, and writes the table\n"
    "to the tuning file that libmsg's automatic choice (VIADUCT_PROTOCOL=auto) then reads:\n"
    "VIADUCT_TUNING, else libmsg-tuning.json in $XDG_CACHE_HOME/viaduct or ~/.cache/viaduct.\n"
    "Each round runs one 2-rank job under msgrun per protocol and mode, timing a ping-pong and\n"
    "a two-way exchange at each size; a size goes to the protocol with the least total time,\n"
    "by the median of the rounds. The table is kept per host, provider and mode, dated, with\n"
    "the conditions it was measured under; msg-info shows the table in force.";

struct Options {
    std::string provider, output;
    uint64_t min = 16 << 10, max = 16 << 20;
    long iters = 10, rounds = 3;
    bool measure = false, dry_run = false, json = false;
};

const char *kProtocols[] = {"sendrecv", "rdma", "rdma-write"};
const char *kModes[] = {"unrestricted", "restricted"};

std::vector<uint64_t> sizes(const Options &o) {
    std::vector<uint64_t> out;
    for (uint64_t s = o.min; s <= o.max; s *= 2) out.push_back(s);
    return out;
}

// ---- one job's rank (--measure) ----

void require(int rc, const char *what) {
    if (rc == MSG_OK) return;
    std::fprintf(stderr, "msg-tune: %s: %s\n", what, msg_strerror(rc));
    std::exit(1);
}

// Seconds per iteration: rank 0 sends and rank 1 returns (ping-pong), or both send and receive
// at once (exchange).
double time_pattern(msg_context_t *ctx, int rank, std::vector<char> &out, std::vector<char> &in,
                    size_t bytes, long iters, bool exchange) {
    msg_cq_t *cq = nullptr;
    require(msg_cq_create(ctx, &cq), "msg_cq_create");
    Clock::time_point start;
    for (long i = -2; i < iters; ++i) {  // two untimed
        if (i == 0) start = Clock::now();
        const int peer = 1 - rank, tag = exchange ? 2 : 1;
        if (exchange) {
            require(msg_irecv(ctx, peer, tag, in.data(), bytes, cq, nullptr), "msg_irecv");
            require(msg_isend(ctx, peer, tag, out.data(), bytes, cq, nullptr), "msg_isend");
            for (int k = 0; k < 2; ++k) {
                msg_completion_t c;
                require(msg_cq_wait(cq, -1, &c), "msg_cq_wait");
                require(c.status, "an exchange");
            }
        } else if (rank == 0) {
            require(msg_send(ctx, 1, tag, out.data(), bytes), "msg_send");
            require(msg_recv(ctx, 1, tag, in.data(), bytes, nullptr), "msg_recv");
        } else {
            require(msg_recv(ctx, 0, tag, in.data(), bytes, nullptr), "msg_recv");
            require(msg_send(ctx, 0, tag, out.data(), bytes), "msg_send");
        }
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count() / iters;
    require(msg_cq_destroy(cq), "msg_cq_destroy");
    return s;
}

int measure(const Options &o) {
    msg_context_t *ctx = nullptr;
    require(msg_init(nullptr, &ctx), "msg_init");
    int rank = 0, size = 0;
    msg_info_t info;
    require(msg_rank(ctx, &rank), "msg_rank");
    require(msg_size(ctx, &size), "msg_size");
    require(msg_get_info(ctx, &info), "msg_get_info");
    if (size != 2) {
        std::fprintf(stderr, "msg-tune --measure: a job of 2 ranks, not %d\n", size);
        return 1;
    }
    std::vector<char> out(o.max, 'x'), in(o.max);
    json figures = json::array();
    for (uint64_t bytes : sizes(o)) {
        const double pp = time_pattern(ctx, rank, out, in, bytes, o.iters, false);
        const double ex = time_pattern(ctx, rank, out, in, bytes, o.iters, true);
        figures.push_back({{"bytes", bytes}, {"pingpong_s", pp}, {"exchange_s", ex}});
    }
    if (rank == 0)
        std::printf("%s\n", json{{"provider", info.provider}, {"figures", figures}}.dump().c_str());
    const int rc = msg_finalize(ctx);
    msg_destroy(ctx);
    return rc == MSG_OK ? 0 : 1;
}

// ---- the tuner ----

// Runs one job, its rank 0's JSON line, or null (said on stderr).
json run_job(const Options &o, const char *protocol, const char *mode) {
    const std::string exe = viaduct::self_exe();
    const std::string dir = exe.substr(0, exe.rfind('/') + 1);
    std::vector<std::string> args = {dir + "msgrun",
                                     "-n",
                                     "2",
                                     "--timeout",
                                     "600",
                                     "--",
                                     dir + "msg-tune",
                                     "--measure",
                                     "--min",
                                     std::to_string(o.min),
                                     "--max",
                                     std::to_string(o.max),
                                     "--iters",
                                     std::to_string(o.iters)};
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return nullptr;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::setenv("VIADUCT_PROTOCOL", protocol, 1);
        ::setenv("VIADUCT_RESTRICTED", std::strcmp(mode, "restricted") == 0 ? "1" : "0", 1);
        ::setenv("VIADUCT_TUNING", "none", 1);
        if (!o.provider.empty()) ::setenv("VIADUCT_PROVIDER", o.provider.c_str(), 1);
        std::vector<char *> argv;
        for (std::string &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        std::fprintf(stderr, "msg-tune: cannot run %s: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;)
        if (n > 0)
            text.append(buf, static_cast<size_t>(n));
        else if (errno != EINTR)
            break;
    ::close(fds[0]);
    int status = 0;
    while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const json j = json::parse(text, nullptr, false);
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !j.is_object()) {
        std::fprintf(stderr, "msg-tune: the %s job in %s mode failed (msgrun status %d)\n",
                     protocol, mode, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return nullptr;
    }
    return j;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Per mode: per size, per protocol, the median seconds of a ping-pong plus an exchange.
using Scores = std::map<std::string, std::vector<std::map<std::string, double>>>;

// One job's line, checked (it is another process's output): per size, a ping-pong plus an
// exchange, in seconds, and the provider it ran on. False, said on stderr, when malformed.
bool job_seconds(const json &j, size_t n, std::vector<double> &seconds, std::string &provider) {
    const auto number = [](const json &f, const char *key) {
        const auto it = f.is_object() ? f.find(key) : f.end();
        return it != f.end() && it->is_number() && it->get<double>() >= 0 ? it->get<double>()
                                                                          : -1.0;
    };
    const auto figures = j.is_object() ? j.find("figures") : j.end();
    const auto prov = j.is_object() ? j.find("provider") : j.end();
    bool ok = figures != j.end() && figures->is_array() && figures->size() == n &&
              prov != j.end() && prov->is_string();
    seconds.clear();
    for (size_t i = 0; ok && i < n; ++i) {
        const double pp = number((*figures)[i], "pingpong_s");
        const double ex = number((*figures)[i], "exchange_s");
        ok = pp >= 0 && ex >= 0;
        seconds.push_back(pp + ex);
    }
    if (ok)
        provider = prov->get<std::string>();
    else if (!j.is_null())
        std::fprintf(stderr, "msg-tune: a job's figures are malformed\n");
    return ok;
}

bool measure_all(const Options &o, Scores &scores, std::string &provider) {
    const size_t n = sizes(o).size();
    std::map<std::string, std::map<std::string, std::vector<std::vector<double>>>> runs;
    for (long round = 0; round < o.rounds; ++round)
        for (const char *mode : kModes)
            for (const char *protocol : kProtocols) {
                std::fprintf(stderr, "msg-tune: round %ld of %ld, %s, %s\n", round + 1, o.rounds,
                             mode, protocol);
                std::vector<double> seconds;
                if (!job_seconds(run_job(o, protocol, mode), n, seconds, provider)) return false;
                auto &per_size = runs[mode][protocol];
                per_size.resize(n);
                for (size_t i = 0; i < n; ++i) per_size[i].push_back(seconds[i]);
            }
    for (const char *mode : kModes) {
        scores[mode].resize(n);
        for (const char *protocol : kProtocols)
            for (size_t i = 0; i < n; ++i)
                scores[mode][i][protocol] = median(runs[mode][protocol][i]);
    }
    return true;
}

// The table for one mode: each size's fastest protocol, keeping the previous size's when it is
// within 3% (a tie is noise, not a reason for another range); a range ends at the last size its
// protocol won, and the last range covers every larger size.
json decide(const std::vector<uint64_t> &szs, const std::vector<std::map<std::string, double>> &s) {
    json ranges = json::array();
    std::string current;
    for (size_t i = 0; i < szs.size(); ++i) {
        std::string best = kProtocols[0];
        for (const char *p : kProtocols)
            if (s[i].at(p) < s[i].at(best)) best = p;
        if (!current.empty() && s[i].at(current) <= 1.03 * s[i].at(best)) best = current;
        if (!current.empty() && best != current) ranges.push_back({szs[i - 1], current});
        current = best;
    }
    ranges.push_back({nullptr, current});
    return ranges;
}

std::string utc_now() {
    char when[32];
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return when;
}

json conditions(const Options &o) {
    double load[3] = {};
    ::getloadavg(load, 3);
    int major = 0, minor = 0, patch = 0;
    msg_get_version(&major, &minor, &patch);
    return {{"libmsg",
             std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
            {"load_average", load[0]},
            {"cpus_online", ::sysconf(_SC_NPROCESSORS_ONLN)},
            {"rounds", o.rounds},
            {"iterations", o.iters},
            {"score",
             "median over the rounds of one ping-pong round trip plus one two-way "
             "exchange, in seconds"}};
}

// Whether the old file's table `t` is one of `tables` (the same host, provider and mode).
bool replaced(const json &t, const json &tables) {
    const json *h = msg::tuning_member(t, "host"), *p = msg::tuning_member(t, "provider"),
               *m = msg::tuning_member(t, "mode");
    return std::any_of(tables.begin(), tables.end(), [&](const json &n) {
        return h != nullptr && p != nullptr && m != nullptr && *h == n["host"] &&
               *p == n["provider"] && *m == n["mode"];
    });
}

// The file's new text: the tables it held, read as libmsg reads the file (when it is one it
// would read, else it is replaced, with a warning), with this host's tables for the provider
// replaced by `tables`.
std::string merged(const std::string &path, const json &tables) {
    json doc = {{"format", msg::kTuningFormat},
                {"version", msg::kTuningVersion},
                {"tables", json::array()}};
    std::string text, why;
    bool exists = false;
    if (!msg::read_tuning_file(path, text, exists, &why)) {
        std::fprintf(stderr, "msg-tune: %s is not read (%s): replaced\n", path.c_str(),
                     why.c_str());
    } else if (exists) {
        const json old = json::parse(text, nullptr, false);
        const json *format = msg::tuning_member(old, "format");
        const json *kept = msg::tuning_member(old, "tables");
        if (format != nullptr && *format == msg::kTuningFormat && kept != nullptr &&
            kept->is_array()) {
            for (const json &t : *kept)
                if (!replaced(t, tables)) doc["tables"].push_back(t);
        } else {
            std::fprintf(stderr, "msg-tune: %s was no tuning file: replaced\n", path.c_str());
        }
    }
    for (const json &t : tables) doc["tables"].push_back(t);
    return doc.dump(1) + "\n";
}

void print_summary(const std::vector<uint64_t> &szs, const Scores &scores, const json &tables) {
    for (const char *mode : kModes) {
        std::printf("%s: microseconds, ping-pong round trip + exchange (median of rounds)\n", mode);
        std::printf("%12s %12s %12s %12s\n", "bytes", "sendrecv", "rdma", "rdma-write");
        for (size_t i = 0; i < szs.size(); ++i)
            std::printf("%12llu %12.1f %12.1f %12.1f\n", static_cast<unsigned long long>(szs[i]),
                        1e6 * scores.at(mode)[i].at("sendrecv"),
                        1e6 * scores.at(mode)[i].at("rdma"),
                        1e6 * scores.at(mode)[i].at("rdma-write"));
    }
    for (const json &t : tables)
        std::printf("table, %s: %s\n", t["mode"].get<std::string>().c_str(),
                    t["ranges"].dump().c_str());
}

int tune(const Options &o) {
    Scores scores;
    std::string provider;
    if (!measure_all(o, scores, provider)) return 1;
    const std::vector<uint64_t> szs = sizes(o);
    struct utsname un {};
    ::uname(&un);
    const json measured_at = utc_now(), measured_under = conditions(o);
    json tables = json::array();
    for (const char *mode : kModes) {
        json figures = json::array();
        for (size_t i = 0; i < szs.size(); ++i)
            figures.push_back({{"bytes", szs[i]}, {"seconds", scores[mode][i]}});
        tables.push_back({{"host", un.nodename},
                          {"provider", msg::provider_first_name(provider)},
                          {"opens_as", provider},
                          {"mode", mode},
                          {"ranges", decide(szs, scores[mode])},
                          {"measured_at", measured_at},
                          {"conditions", measured_under},
                          {"figures", figures}});
    }
    bool explicit_path = false;
    const std::string path = !o.output.empty() ? o.output : msg::tuning_path(&explicit_path);
    if (o.json)
        std::printf(
            "%s\n",
            json{{"path", path}, {"written", !o.dry_run}, {"tables", tables}}.dump().c_str());
    else
        print_summary(szs, scores, tables);
    if (o.dry_run) return 0;
    if (path.empty()) {
        std::fprintf(stderr,
                     "msg-tune: no tuning file (VIADUCT_TUNING=none, or no home): use --output\n");
        return 1;
    }
    std::string why;
    if (o.output.empty() && !explicit_path)
        viaduct::make_private_dir(viaduct::path_dir(path), why);  // ~/.cache/viaduct, 0700
    // 0644 less the umask, not 0666: libmsg ignores a tuning file others may write.
    why = viaduct::write_file_atomically(path, merged(path, tables), 0644);
    if (!why.empty()) {
        std::fprintf(stderr, "msg-tune: %s\n", why.c_str());
        return 1;
    }
    if (!o.json) std::printf("written to %s\n", path.c_str());
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msg-tune");
    CLI::App app;
    viaduct::cli::setup(app, "msg-tune");
    app.description(kDescription);
    Options o;
    app.add_option("-p,--provider", o.provider,
                   "the provider to tune (default: VIADUCT_PROVIDER, else shm)");
    viaduct::cli::add_size(app, "--min", o.min, "smallest size measured (default 16K)");
    viaduct::cli::add_size(app, "--max", o.max, "largest size measured, by doubling (default 16M)");
    app.add_option("--iters", o.iters, "timed iterations per size and pattern (default 10)")
        ->check(CLI::Range(1L, 100000L));
    app.add_option("--rounds", o.rounds,
                   "rounds of every protocol and mode, alternating; the median counts (default 3)")
        ->check(CLI::Range(1L, 99L));
    app.add_option("-o,--output", o.output,
                   "the tuning file to write (default: VIADUCT_TUNING, else the user's cache)")
        ->type_name("PATH");
    app.add_flag("--dry-run", o.dry_run, "measure and print, write nothing");
    app.add_flag("--json", o.json, "print one JSON object");
    app.add_flag("--measure", o.measure, "one job's rank (msg-tune runs itself so under msgrun)")
        ->group("");
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    if (o.min == 0 || o.max < o.min || o.max > (1ull << 30)) {
        viaduct::cli::usage_error("msg-tune",
                                  "--min must be positive and at most --max (at most 1G)");
        return viaduct::cli::exit_usage;
    }
    return o.measure ? measure(o) : tune(o);
}
