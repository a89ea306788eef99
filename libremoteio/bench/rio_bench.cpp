// rio-bench: remote-read throughput through libremoteio for a range of block
// sizes and outstanding-request depths, in two patterns — P-1 readers of one
// server, and all-to-all (every rank reads every other's file: the sort's
// phase 3b) — beside, in the same run, local pread of the same files and
// libmsg's own all-to-all at the same block size.
#include <fcntl.h>
#include <rio/rio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "msg_session.hpp"
#include "viaduct/env.hpp"
#include "viaduct/fatal.hpp"

namespace {

using namespace viaduct::bench;

constexpr int kRawTag = 11;

struct Options {
    std::vector<size_t> blocks = {64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB};
    std::vector<long> depths = {1, 4, 16, 64};
    size_t file_bytes = 64 * MiB;
    size_t point_bytes = 64 * MiB;  // read by each reading rank per measurement
    long repeats = 5;               // each figure: the median of this many measurements
    std::string dir;
    bool json = false;
    FabricOptions fabric;

    void check() const {
        for (size_t b : blocks)
            if (b > file_bytes)
                throw UsageError("block " + std::to_string(b) + " is larger than --file");
    }
};

const char kDescription[] =
    "msgrun -n P rio-bench [OPTIONS]\n"
    "Every rank writes a scratch file and exports it. For each block size and depth (reads\n"
    "kept outstanding per reading rank) it measures remote-read MB/s (MB = 10^6 bytes):\n"
    "  many-to-one  ranks 1..P-1 read rank 0's file; figure: MB/s delivered by rank 0\n"
    "  all-to-all   every rank reads every other rank's file, peers in turn; figure: MB/s\n"
    "               read per rank\n"
    "and beside them, per block size: local pread of the rank's own file (MB/s per rank) and\n"
    "libmsg's all-to-all (one send to and one receive from every peer in flight, re-issued:\n"
    "MB/s received per rank). Ratio = all-to-all remote read / libmsg all-to-all.\n"
    "Each figure is the median of --repeat measurements, taken in turns (every pattern and\n"
    "baseline of a block size once, then again), so a slow spell of a shared host falls on\n"
    "all of them alike.";

template <typename T, typename F>
std::vector<T> parse_list(const std::string &text, const char *name, F parse_one) {
    std::vector<T> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string item =
            text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        auto v = parse_one(item);
        if (!v) throw CLI::ValidationError(std::string(name) + ": '" + item + "' is not valid");
        out.push_back(*v);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

void add_options(CLI::App &app, Options &o) {
    app.add_option_function<std::string>(
           "--blocks",
           [&o](const std::string &text) {
               o.blocks = parse_list<size_t>(text, "--blocks", [](const std::string &s) {
                   auto v = parse_size(s);
                   return v && *v > 0 && *v <= 256 * MiB ? v : std::nullopt;
               });
           },
           "block sizes, SIZEs (default 64K,256K,1M,4M)")
        ->type_name("LIST");
    app.add_option_function<std::string>(
           "--depths",
           [&o](const std::string &text) {
               o.depths = parse_list<long>(text, "--depths", [](const std::string &s) {
                   auto v = parse_long(s);
                   return v && *v >= 1 && *v <= 4096 ? v : std::nullopt;
               });
           },
           "outstanding reads per reading rank (default 1,4,16,64)")
        ->type_name("LIST");
    viaduct::cli::add_size(app, "--file", o.file_bytes, "scratch file per rank (default 64M)");
    viaduct::cli::add_size(app, "--bytes", o.point_bytes,
                           "bytes each reading rank moves per measurement (default 64M)", 1);
    add_long(app, "--repeat", o.repeats, 1, 1000,
             "measurements per figure, median reported (default 5)");
    app.add_option("--dir", o.dir, "where the scratch files go (default $TMPDIR or /tmp)")
        ->type_name("PATH");
    app.add_flag("--json", o.json, "print one JSON object instead of tables");
}

void check_rio(int status, const char *what) {
    if (status != RIO_OK) throw Error(std::string(what) + ": " + rio_strerror(status));
}

// A scratch file of the rank's own, removed at exit.
class ScratchFile {
  public:
    ScratchFile(const std::string &dir, int rank, size_t bytes) {
        std::string base = dir;
        if (base.empty()) {
            base = viaduct::env::text("TMPDIR", "/tmp");
        }
        std::string tmpl = base + "/rio-bench-" + std::to_string(rank) + "-XXXXXX";
        std::vector<char> name(tmpl.begin(), tmpl.end());
        name.push_back('\0');
        fd_ = mkstemp(name.data());
        if (fd_ < 0) throw Error("cannot create a scratch file in " + base);
        path_ = name.data();
        std::vector<unsigned char> block(MiB);
        for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<unsigned char>(i * 7);
        for (size_t done = 0; done < bytes;) {
            size_t n = std::min(block.size(), bytes - done);
            if (pwrite(fd_, block.data(), n, static_cast<off_t>(done)) != static_cast<ssize_t>(n))
                throw Error("writing " + path_ + ": " + std::strerror(errno));
            done += n;
        }
    }
    ~ScratchFile() {
        close(fd_);
        unlink(path_.c_str());
    }
    ScratchFile(const ScratchFile &) = delete;
    ScratchFile &operator=(const ScratchFile &) = delete;
    const std::string &path() const { return path_; }
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
    std::string path_;
};

struct Job {
    Context &ctx;
    rio_t *rio;
    msg_cq_t *cq;
    int rank, size;
    std::vector<uint64_t> handles;
    size_t file_bytes;
};

// Keeps `depth` reads in flight from `peers` (in turn) until `total` bytes
// have come back. Offsets walk through each peer's file block by block.
void read_remote(Job &job, const std::vector<int> &peers, size_t block, long depth, size_t total,
                 AlignedBuffer &buf) {
    const size_t blocks_in_file = job.file_bytes / block;
    const auto slots = static_cast<size_t>(depth);
    size_t issued = 0, done = 0, next_peer = 0;
    const size_t count = (total + block - 1) / block;
    auto issue = [&](size_t slot) {
        int peer = peers[next_peer++ % peers.size()];
        uint64_t offset = (issued % blocks_in_file) * block;
        check_rio(
            rio_read(job.rio, peer, job.handles[static_cast<size_t>(peer)], offset,
                     buf.data() + slot * block, block, job.cq, reinterpret_cast<void *>(slot)),
            "rio_read");
        ++issued;
    };
    for (size_t s = 0; s < slots && issued < count; ++s) issue(s);
    while (done < count) {
        msg_completion_t c;
        check(msg_cq_wait(job.cq, 120000, &c), "waiting for a remote read");
        check_rio(c.status, "remote read");
        if (c.bytes != block) throw Error("a remote read returned a short block");
        ++done;
        if (issued < count) issue(reinterpret_cast<size_t>(c.cookie));
    }
}

double timed(Job &job, const std::function<void()> &body) {
    check(msg_barrier(job.ctx.get()), "msg_barrier");
    auto t0 = Clock::now();
    body();
    check(msg_barrier(job.ctx.get()), "msg_barrier");
    return seconds_since(t0);
}

// libmsg's all-to-all at one block size: one send to and one receive from
// every peer in flight, re-issued until each rank has received `total` bytes.
void raw_alltoall(Job &job, size_t block, size_t total, AlignedBuffer &sendbuf,
                  AlignedBuffer &recvbuf) {
    const int peers = job.size - 1;
    const size_t per_peer = std::max<size_t>(1, total / block / static_cast<size_t>(peers));
    std::vector<size_t> sends(static_cast<size_t>(job.size)), recvs(sends.size());
    size_t outstanding = 0;
    auto post = [&](int peer, bool send) {
        auto p = static_cast<size_t>(peer);
        void *cookie = reinterpret_cast<void *>(p * 2 + (send ? 1 : 0));
        if (send) {
            check(msg_isend(job.ctx.get(), peer, kRawTag, sendbuf.data() + p * block, block, job.cq,
                            cookie),
                  "msg_isend");
            ++sends[p];
        } else {
            check(msg_irecv(job.ctx.get(), peer, kRawTag, recvbuf.data() + p * block, block, job.cq,
                            cookie),
                  "msg_irecv");
            ++recvs[p];
        }
        ++outstanding;
    };
    for (int p = 0; p < job.size; ++p) {
        if (p == job.rank) continue;
        post(p, false);
        post(p, true);
    }
    while (outstanding > 0) {
        msg_completion_t c;
        check(msg_cq_wait(job.cq, 120000, &c), "waiting in the libmsg all-to-all");
        check(c.status, "libmsg all-to-all operation");
        --outstanding;
        auto v = reinterpret_cast<size_t>(c.cookie);
        auto p = static_cast<int>(v / 2);
        bool send = v % 2 == 1;
        if ((send ? sends : recvs)[static_cast<size_t>(p)] < per_peer) post(p, send);
    }
}

double local_pread(const ScratchFile &file, size_t block, size_t total, AlignedBuffer &buf,
                   size_t file_bytes) {
    const size_t blocks_in_file = file_bytes / block;
    auto t0 = Clock::now();
    for (size_t i = 0, n = (total + block - 1) / block; i < n; ++i) {
        auto off = static_cast<off_t>((i % blocks_in_file) * block);
        if (pread(file.fd(), buf.data(), block, off) != static_cast<ssize_t>(block))
            throw Error("local pread failed");
    }
    return seconds_since(t0);
}

struct Point {
    std::string pattern;
    size_t block;
    long depth;
    double mbps;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Baseline {
    size_t block;
    double pread_mbps;
    double msg_alltoall_mbps;
};

// Handles travel over libmsg itself: each rank sends its own to every other.
void exchange_handles(Job &job, uint64_t mine) {
    job.handles.resize(static_cast<size_t>(job.size));
    for (int p = 0; p < job.size; ++p) {
        if (p == job.rank) continue;
        check(msg_irecv(job.ctx.get(), p, kRawTag, &job.handles[static_cast<size_t>(p)],
                        sizeof(uint64_t), job.cq, nullptr),
              "msg_irecv");
        check(msg_isend(job.ctx.get(), p, kRawTag, &mine, sizeof mine, job.cq, nullptr),
              "msg_isend");
    }
    for (int i = 0; i < 2 * (job.size - 1); ++i) {
        msg_completion_t c;
        check(msg_cq_wait(job.cq, 60000, &c), "exchanging handles");
        check(c.status, "exchanging handles");
    }
}

// Every point of the sweep (block size by depth, both patterns) and each
// block size's baselines, as the median of o.repeats runs.
void measure(const Options &o, Job &job, ScratchFile &file, std::vector<Point> &points,
             std::vector<Baseline> &baselines) {
    const size_t max_block = *std::max_element(o.blocks.begin(), o.blocks.end());
    const long max_depth = *std::max_element(o.depths.begin(), o.depths.end());
    AlignedBuffer readbuf(max_block * static_cast<size_t>(max_depth));
    AlignedBuffer sendbuf(max_block * static_cast<size_t>(job.size));
    AlignedBuffer recvbuf(max_block * static_cast<size_t>(job.size));
    std::vector<int> others;
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank) others.push_back(p);
    const double P = job.size;
    const double total = static_cast<double>(o.point_bytes);

    for (size_t block : o.blocks) {
        const size_t ndepths = o.depths.size();
        std::vector<double> pread, alltoall;
        std::vector<std::vector<double>> to_one(ndepths), remote(ndepths);
        for (long r = 0; r < o.repeats; ++r) {
            double t =
                timed(job, [&] { local_pread(file, block, o.point_bytes, readbuf, o.file_bytes); });
            pread.push_back(total / t / 1e6);  // every rank reads at once; the slowest sets t
            t = timed(job, [&] { raw_alltoall(job, block, o.point_bytes, sendbuf, recvbuf); });
            size_t per_peer = std::max<size_t>(1, o.point_bytes / block / others.size());
            alltoall.push_back(static_cast<double>(per_peer * others.size() * block) / t / 1e6);
            for (size_t d = 0; d < ndepths; ++d) {
                long depth = o.depths[d];
                t = timed(job, [&] {
                    if (job.rank != 0) read_remote(job, {0}, block, depth, o.point_bytes, readbuf);
                });
                to_one[d].push_back((P - 1) * total / t / 1e6);
                t = timed(job,
                          [&] { read_remote(job, others, block, depth, o.point_bytes, readbuf); });
                remote[d].push_back(total / t / 1e6);
            }
        }
        baselines.push_back({block, median(pread), median(alltoall)});
        for (size_t d = 0; d < ndepths; ++d) {
            points.push_back({"many_to_one", block, o.depths[d], median(to_one[d])});
            points.push_back({"all_to_all", block, o.depths[d], median(remote[d])});
        }
    }
}

Baseline baseline_of(const std::vector<Baseline> &baselines, size_t block) {
    for (const Baseline &b : baselines)
        if (b.block == block) return b;
    return Baseline{};
}

void print_results_json(const Options &o, const msg_info_t &info, const std::vector<Point> &points,
                        const std::vector<Baseline> &baselines) {
    Json rows = Json::array(), bases = Json::array();
    for (const Point &p : points) {
        Json ratio = nullptr;
        if (p.pattern == "all_to_all")
            ratio = json_number(p.mbps / baseline_of(baselines, p.block).msg_alltoall_mbps, 3);
        rows.push_back({{"pattern", p.pattern},
                        {"block_bytes", p.block},
                        {"outstanding", p.depth},
                        {"mbps", json_number(p.mbps, 1)},
                        {"ratio_to_msg_alltoall", ratio}});
    }
    for (const Baseline &b : baselines)
        bases.push_back({{"block_bytes", b.block},
                         {"local_pread_mbps", json_number(b.pread_mbps, 1)},
                         {"msg_alltoall_per_rank_mbps", json_number(b.msg_alltoall_mbps, 1)}});
    print_json({{"ranks", info.size},
                {"provider", info.provider},
                {"protocol", protocol_name(info.long_protocol)},
                {"file_bytes", o.file_bytes},
                {"bytes_per_point", o.point_bytes},
                {"repeats", o.repeats},
                {"points", rows},
                {"baselines", bases}});
}

void print_table(const Options &o, const msg_info_t &info, const std::vector<Point> &points,
                 const std::vector<Baseline> &baselines) {
    std::printf(
        "# rio-bench: %d ranks, provider %s, protocol %s, %zu MiB file per rank, "
        "%zu MiB per reading rank per point, median of %ld; MB = 10^6 B\n",
        info.size, info.provider, protocol_name(info.long_protocol), o.file_bytes / MiB,
        o.point_bytes / MiB, o.repeats);
    std::printf("%10s %6s %14s %14s %14s %16s %8s\n", "block", "depth", "many-to-one", "all-to-all",
                "local pread", "msg all-to-all", "ratio");
    std::printf("%10s %6s %14s %14s %14s %16s %8s\n", "", "", "MB/s @rank0", "MB/s/rank",
                "MB/s/rank", "MB/s/rank recv", "a2a/msg");
    for (size_t i = 0; i + 1 < points.size(); i += 2) {
        const Point &m = points[i], &a = points[i + 1];
        Baseline b = baseline_of(baselines, m.block);
        std::printf("%10zu %6ld %14.1f %14.1f %14.1f %16.1f %8.2f\n", m.block, m.depth, m.mbps,
                    a.mbps, b.pread_mbps, b.msg_alltoall_mbps, a.mbps / b.msg_alltoall_mbps);
    }
}

int run(const Options &o, int &rank_out) {
    msg_config_t config = o.fabric.config();
    Context ctx(config);
    msg_info_t info = ctx.info();
    rank_out = info.rank;
    if (info.size < 2) throw Error("rio-bench needs at least 2 ranks (msgrun -n P, P >= 2)");
    CompletionQueue cq(ctx);
    rio_t *rio = nullptr;
    check_rio(rio_init(ctx.get(), nullptr, nullptr, &rio), "rio_init");
    struct RioOwner {
        rio_t *r;
        ~RioOwner() { rio_destroy(r); }
    } owner{rio};

    ScratchFile file(o.dir, info.rank, o.file_bytes);
    uint64_t mine = 0;
    check_rio(
        rio_export(rio, file.path().c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &mine),
        "rio_export");
    Job job{ctx, rio, cq.get(), info.rank, info.size, {}, o.file_bytes};
    exchange_handles(job, mine);

    std::vector<Point> points;
    std::vector<Baseline> baselines;
    measure(o, job, file, points, baselines);
    int rc = rio_finalize(rio);
    check_rio(rc, "rio_finalize");
    if (info.rank != 0) {
        ctx.finalize();
        return 0;
    }
    if (o.json)
        print_results_json(o, info, points, baselines);
    else
        print_table(o, info, points, baselines);
    ctx.finalize();
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("rio-bench");
    return benchmark_main("rio-bench", kDescription, argc, argv, add_options, run);
}
