// msg-alltoall: the paper's aggregate-bandwidth test (§5.2.2.2, Figure 5). Every rank keeps one
// async send to and one async receive from every other rank in flight on one CQ, re-issuing each
// as it completes, until each has been issued I times; reports bidirectional MB/s per rank.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "msg_session.hpp"
#include "viaduct/fatal.hpp"

namespace {

using namespace viaduct::bench;

constexpr int kDataTag = 2;
constexpr int kResultTag = 3;

struct Options {
    size_t message_bytes = 512 * KiB;  // the paper's phase-3b block size
    long iterations = 50;
    long repeats = 1;
    bool rotate = false;
    size_t region_bytes = 128 * MiB;
    long timeout_s = 120;
    bool json = false;
    FabricOptions fabric;

    void check() const {}
};

const char kDescription[] =
    "msgrun -n P msg-alltoall [OPTIONS]\n"
    "Each rank keeps one msg_isend to and one msg_irecv from every other rank in flight on\n"
    "one CQ and re-issues each as it completes until it has been issued I times. Per-rank\n"
    "bidirectional MB/s = (bytes sent + bytes received) / elapsed, MB = 10^6 bytes;\n"
    "aggregate = sum over ranks.";

void add_options(CLI::App &app, Options &o) {
    viaduct::cli::add_size(app, "--bytes", o.message_bytes, "message size (default 512K)", 1);
    add_long(app, "--iters", o.iterations, 1, 1000000000,
             "issues of each send and each receive (default 50)");
    add_long(app, "--repeat", o.repeats, 1, 10000,
             "measure R times in this job and report the median repeat (by per-rank mean; "
             "default 1): a short run on a noisy machine is one sample, not a figure");
    app.add_flag("--rotate", o.rotate,
                 "move through a region larger than the caches (DRAM) instead of reusing one "
                 "buffer per operation");
    app.add_flag_function(
        "--reuse", [&o](std::int64_t) { o.rotate = false; },
        "reuse one buffer per operation (the default)");
    viaduct::cli::add_size(app, "--region", o.region_bytes,
                           "with --rotate: region per direction (default 128M)");
    add_long(app, "--timeout", o.timeout_s, 1, 86400,
             "give up if no operation completes for this many seconds (default 120)")
        ->type_name("SECONDS");
    app.add_flag("--json", o.json, "print one JSON object instead of a table");
}

// Message buffers for one direction. Reusing, each operation owns one slot for the whole run,
// so small jobs run from cache. Rotating, an issue takes the oldest free slot, so successive
// messages walk the whole region (default four times the L3 of this machine) and come from DRAM.
class BufferPool {
  public:
    BufferPool() = default;
    BufferPool(size_t message_bytes, size_t slots)
        : message_bytes_(message_bytes), region_(message_bytes * slots) {
        for (size_t i = 0; i < slots; ++i) free_.push_back(i);
    }

    size_t acquire() {
        size_t slot = free_.front();
        free_.pop_front();
        return slot;
    }
    void release(size_t slot) { free_.push_back(slot); }
    std::byte *at(size_t slot) const { return region_.data() + slot * message_bytes_; }

  private:
    size_t message_bytes_ = 0;
    AlignedBuffer region_;
    std::deque<size_t> free_;
};

// Sender rank, receiver rank and iteration at the front of each message, and a copy of them at
// its end: a lost, stale, misrouted or half-delivered message fails the check, while the cost
// stays two words per message.
struct Mark {
    uint32_t magic;
    int32_t source;
    int32_t dest;
    uint32_t iteration;
};
constexpr uint32_t kMagic = 0x76696164;  // "viad"

Mark mark_for(int source, int dest, long iteration) {
    return {kMagic, source, dest, static_cast<uint32_t>(iteration)};
}

void write_marks(std::byte *buf, size_t bytes, const Mark &m) {
    std::memcpy(buf, &m, std::min(bytes, sizeof m));
    if (bytes >= 2 * sizeof m) std::memcpy(buf + bytes - sizeof m, &m, sizeof m);
}

bool has_marks(const std::byte *buf, size_t bytes, const Mark &m) {
    if (std::memcmp(buf, &m, std::min(bytes, sizeof m)) != 0) return false;
    return bytes < 2 * sizeof m || std::memcmp(buf + bytes - sizeof m, &m, sizeof m) == 0;
}

// One of the paper's "specific sends and receives": a peer and a direction, issued I times.
struct Operation {
    int peer = 0;
    bool is_send = false;
    long issued = 0;
    long completed = 0;
    size_t slot = 0;
};

// What each rank measured; ranks send this to rank 0 as raw bytes (same binary everywhere).
struct RankResult {
    double elapsed_seconds;
    double bidir_mbps;
    double connect_seconds;
    uint64_t bytes_sent;
    uint64_t bytes_received;
};

class AllToAll {
  public:
    AllToAll(const Options &o, Context &ctx, CompletionQueue &cq, const msg_info_t &info,
             BufferPool &sends, BufferPool &recvs)
        : o_(o), ctx_(ctx), cq_(cq), me_(info.rank), sends_(sends), recvs_(recvs) {
        // Receives are posted before sends so first arrivals find a buffer waiting, and each
        // rank starts with the rank after it rather than everyone starting with rank 0.
        for (bool is_send : {false, true}) {
            for (int i = 1; i < info.size; ++i) {
                ops_.push_back({(me_ + i) % info.size, is_send, 0, 0, 0});
            }
        }
        if (!o_.rotate) {
            for (Operation &op : ops_) op.slot = (op.is_send ? sends_ : recvs_).acquire();
        }
    }

    // One measurement; the same object measures again (buffers and their slots are kept).
    RankResult run() {
        for (Operation &op : ops_) op.issued = op.completed = 0;
        bytes_sent_ = bytes_received_ = 0;
        Clock::time_point start = Clock::now();
        for (Operation &op : ops_) issue(op);
        size_t remaining = ops_.size() * static_cast<size_t>(o_.iterations);
        const int timeout_ms = static_cast<int>(o_.timeout_s * 1000);
        msg_completion_t c{};
        while (remaining > 0) {
            int status = msg_cq_wait(cq_.get(), timeout_ms, &c);
            if (status == MSG_ERR_TIMEOUT) {
                throw Error("no operation completed for " + std::to_string(o_.timeout_s) +
                            " s with " + std::to_string(remaining) + " still to complete");
            }
            check(status, "msg_cq_wait");
            complete(*static_cast<Operation *>(c.cookie), c);
            --remaining;
        }
        double elapsed = seconds_since(start);
        double moved = static_cast<double>(bytes_sent_ + bytes_received_);
        return {elapsed, moved / elapsed / 1e6, 0.0, bytes_sent_, bytes_received_};
    }

  private:
    void issue(Operation &op) {
        BufferPool &pool = op.is_send ? sends_ : recvs_;
        if (o_.rotate) op.slot = pool.acquire();
        std::byte *buf = pool.at(op.slot);
        const size_t bytes = o_.message_bytes;
        if (op.is_send) {
            write_marks(buf, bytes, mark_for(me_, op.peer, op.issued));
            check(msg_isend(ctx_.get(), op.peer, kDataTag, buf, bytes, cq_.get(), &op),
                  "msg_isend");
        } else {
            check(msg_irecv(ctx_.get(), op.peer, kDataTag, buf, bytes, cq_.get(), &op),
                  "msg_irecv");
        }
        ++op.issued;
    }

    void complete(Operation &op, const msg_completion_t &c) {
        const char *what = op.is_send ? "send to" : "receive from";
        const std::string where = std::string(what) + " rank " + std::to_string(op.peer) +
                                  ", iteration " + std::to_string(op.completed);
        if (c.status != MSG_OK) throw Error(where + ": " + msg_strerror(c.status));
        const int expected_op = op.is_send ? MSG_OP_SEND : MSG_OP_RECV;
        if (c.op != expected_op || c.source != op.peer || c.tag != kDataTag ||
            c.bytes != o_.message_bytes) {
            throw Error(where + ": completion says op " + std::to_string(c.op) + ", rank " +
                        std::to_string(c.source) + ", tag " + std::to_string(c.tag) + ", " +
                        std::to_string(c.bytes) + " bytes");
        }
        BufferPool &pool = op.is_send ? sends_ : recvs_;
        if (op.is_send) {
            bytes_sent_ += c.bytes;
        } else {
            std::byte *buf = pool.at(op.slot);
            // Receives from one peer are one at a time and FIFO, so the n-th completes the
            // peer's n-th send.
            if (!has_marks(buf, c.bytes, mark_for(op.peer, me_, op.completed))) {
                throw Error(where +
                            ": payload check failed (sender, receiver or iteration "
                            "marks do not match)");
            }
            // Wipe the marks so a later receive into this buffer cannot pass on stale bytes.
            write_marks(buf, c.bytes, Mark{});
            bytes_received_ += c.bytes;
        }
        ++op.completed;
        if (o_.rotate) pool.release(op.slot);
        if (op.issued < o_.iterations) issue(op);
    }

    const Options &o_;
    Context &ctx_;
    CompletionQueue &cq_;
    int me_;
    BufferPool &sends_;
    BufferPool &recvs_;
    std::vector<Operation> ops_;  // never resized after construction: cookies point into it
    uint64_t bytes_sent_ = 0;
    uint64_t bytes_received_ = 0;
};

struct Summary {
    double mean_mbps = 0, min_mbps = 0, max_mbps = 0, aggregate_mbps = 0;
    double max_elapsed = 0, max_connect = 0;
};

Summary summarize(const std::vector<RankResult> &all) {
    Summary s;
    s.min_mbps = all.front().bidir_mbps;
    s.max_mbps = all.front().bidir_mbps;
    for (const RankResult &r : all) {
        s.aggregate_mbps += r.bidir_mbps;
        s.min_mbps = std::min(s.min_mbps, r.bidir_mbps);
        s.max_mbps = std::max(s.max_mbps, r.bidir_mbps);
        s.max_elapsed = std::max(s.max_elapsed, r.elapsed_seconds);
        s.max_connect = std::max(s.max_connect, r.connect_seconds);
    }
    s.mean_mbps = s.aggregate_mbps / static_cast<double>(all.size());
    return s;
}

// Each repeat's per-rank mean, and which repeat is the median one (the lower middle of an
// even count).
struct Repeats {
    std::vector<double> means;
    size_t median = 0;
};

Repeats rank_repeats(const std::vector<std::vector<RankResult>> &reps) {
    Repeats r;
    std::vector<size_t> order;
    for (const auto &rep : reps) {
        order.push_back(r.means.size());
        r.means.push_back(summarize(rep).mean_mbps);
    }
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return r.means[a] < r.means[b]; });
    r.median = order[(order.size() - 1) / 2];
    return r;
}

void print_table(const Options &o, const msg_info_t &info,
                 const std::vector<std::vector<RankResult>> &reps) {
    Repeats r = rank_repeats(reps);
    const std::vector<RankResult> &all = reps[r.median];
    Summary s = summarize(all);
    std::printf(
        "# msg-alltoall: %d ranks, %zu B x %ld iterations, buffers %s, provider %s, "
        "protocol %s, mode %s, connect %.4f s\n",
        info.size, o.message_bytes, o.iterations, o.rotate ? "rotated" : "reused", info.provider,
        protocol_name(info.long_protocol), mode_name(info.restricted), s.max_connect);
    std::printf("# bidirectional MB/s = (bytes sent + received) / elapsed, MB = 10^6 B\n");
    if (reps.size() > 1) {
        std::printf("# per-rank mean of each of %zu repeats:", reps.size());
        for (double m : r.means) std::printf(" %.1f", m);
        std::printf("\n# the median repeat (%zu) in detail:\n", r.median + 1);
    }
    std::printf("%6s %12s %14s %14s %14s\n", "rank", "elapsed_s", "sent_B", "received_B",
                "bidir_MB/s");
    for (size_t i = 0; i < all.size(); ++i) {
        std::printf("%6zu %12.4f %14llu %14llu %14.1f\n", i, all[i].elapsed_seconds,
                    static_cast<unsigned long long>(all[i].bytes_sent),
                    static_cast<unsigned long long>(all[i].bytes_received), all[i].bidir_mbps);
    }
    std::printf("per-rank bidirectional MB/s: mean %.1f, min %.1f, max %.1f; aggregate %.1f\n",
                s.mean_mbps, s.min_mbps, s.max_mbps, s.aggregate_mbps);
}

void print_results_json(const Options &o, const msg_info_t &info,
                        const std::vector<std::vector<RankResult>> &reps) {
    Repeats r = rank_repeats(reps);
    Summary s = summarize(reps[r.median]);
    Json means = Json::array();
    for (double m : r.means) means.push_back(json_number(m, 3));
    print_json({{"benchmark", "msg-alltoall"},
                {"ranks", info.size},
                {"message_bytes", o.message_bytes},
                {"iterations", o.iterations},
                {"buffers", o.rotate ? "rotate" : "reuse"},
                {"mode", mode_name(info.restricted)},
                {"protocol", protocol_name(info.long_protocol)},
                {"provider", info.provider},
                {"per_rank_bidir_mbps", json_number(s.mean_mbps, 3)},
                {"aggregate_mbps", json_number(s.aggregate_mbps, 3)},
                {"min_rank_bidir_mbps", json_number(s.min_mbps, 3)},
                {"max_rank_bidir_mbps", json_number(s.max_mbps, 3)},
                {"elapsed_seconds", json_number(s.max_elapsed, 4)},
                {"connect_seconds", json_number(s.max_connect, 4)},
                {"repeats", reps.size()},
                {"per_rank_bidir_mbps_repeats", means}});
}

int run(const Options &o, int &rank) {
    // Buffers are declared before the context so that, on an error with operations still in
    // flight, the context is torn down before the memory those operations point at.
    BufferPool sends;
    BufferPool recvs;
    msg_config_t config = o.fabric.config();
    Context ctx(config);
    msg_info_t info = ctx.info();
    rank = info.rank;
    if (info.size < 2) {
        std::fprintf(stderr, "msg-alltoall: needs at least 2 ranks (msgrun -n P msg-alltoall)\n");
        return 1;
    }

    const size_t peers = static_cast<size_t>(info.size - 1);
    size_t slots = peers;
    if (o.rotate) slots = std::max(peers, o.region_bytes / o.message_bytes);
    sends = BufferPool(o.message_bytes, slots);
    recvs = BufferPool(o.message_bytes, slots);

    // reps[k][r]: rank r's result in repeat k (rank 0 gathers them all).
    std::vector<std::vector<RankResult>> reps;
    {
        CompletionQueue cq(ctx);
        AllToAll test(o, ctx, cq, info, sends, recvs);
        for (long k = 0; k < o.repeats; ++k) {
            check(msg_barrier(ctx.get()), "msg_barrier");
            RankResult mine = test.run();
            mine.connect_seconds = info.connect_seconds;
            if (rank != 0) {
                check(msg_send(ctx.get(), 0, kResultTag, &mine, sizeof mine), "msg_send (result)");
                continue;
            }
            std::vector<RankResult> &all = reps.emplace_back(static_cast<size_t>(info.size));
            all[0] = mine;
            for (int r = 1; r < info.size; ++r) {
                msg_completion_t c{};
                check(msg_recv(ctx.get(), r, kResultTag, &all[static_cast<size_t>(r)],
                               sizeof(RankResult), &c),
                      "msg_recv (gathering results)");
                if (c.bytes != sizeof(RankResult)) {
                    throw Error("rank " + std::to_string(r) + " sent a malformed result");
                }
            }
        }
    }
    ctx.finalize();

    if (rank == 0) {
        if (o.json) {
            print_results_json(o, info, reps);
        } else {
            print_table(o, info, reps);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msg-alltoall");
    return viaduct::bench::benchmark_main("msg-alltoall", kDescription, argc, argv, add_options,
                                          run);
}
