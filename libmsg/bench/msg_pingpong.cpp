// msg-pingpong: the paper's Figure 4 test (§5.2.2.1). Rank 0 sends a message to rank 1 with
// blocking msg_send/msg_recv and rank 1 sends it back; half the round trip is the one-way time.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <stop_token>
#include <thread>
#include <vector>

#include "msg_session.hpp"
#include "viaduct/fatal.hpp"

namespace {

using namespace viaduct::bench;

constexpr int kPingTag = 1;

struct Options {
    size_t min_bytes = 0;
    size_t max_bytes = 16 * MiB;
    long iterations = 1000;
    long warmup = 10;
    long timeout_s = 60;
    bool json = false;
    FabricOptions fabric;

    void check() const {
        if (min_bytes > max_bytes) throw UsageError("--min is larger than --max");
    }
};

const char kDescription[] =
    "msgrun -n 2 msg-pingpong [OPTIONS]\n"
    "Blocking ping-pong between ranks 0 and 1: one-way latency (round trip / 2) and\n"
    "bandwidth (bytes / one-way time, MB = 10^6 bytes) for 0 B, 1 B, 2 B, ... 16 MiB.";

void add_options(CLI::App &app, Options &o) {
    viaduct::cli::add_size(app, "--min", o.min_bytes, "smallest message (default 0)");
    viaduct::cli::add_size(app, "--max", o.max_bytes, "largest message (default 16M)");
    add_long(app, "--iters", o.iterations, 1, 1000000000,
             "timed round trips up to 64 KiB; larger sizes run N * 64 KiB / size of them, at "
             "least min(N, 20) (default 1000)");
    add_long(app, "--warmup", o.warmup, 0, 1000000000,
             "untimed round trips before each size, scaled the same way (default 10)");
    add_long(app, "--timeout", o.timeout_s, 1, 86400,
             "give up if a message has not arrived after this many seconds (default 60)")
        ->type_name("SECONDS");
    app.add_flag("--json", o.json, "print one JSON object instead of a table");
}

// The paper's sizes: 0 B, 1 B, then every power of two, clipped to [min, max].
std::vector<size_t> message_sizes(const Options &o) {
    std::vector<size_t> sizes;
    if (o.min_bytes == 0) sizes.push_back(0);
    for (size_t s = 1; s <= o.max_bytes && s != 0; s *= 2) {
        if (s >= o.min_bytes) sizes.push_back(s);
    }
    return sizes;
}

// Big messages take long enough that a few round trips give a stable mean; keeping the bytes
// moved per size near N x 64 KiB keeps a full sweep to seconds rather than minutes.
long scaled_count(long count, long floor, size_t bytes) {
    constexpr size_t kFullCountUpTo = 64 * KiB;
    if (bytes <= kFullCountUpTo) return count;
    long scaled = static_cast<long>(static_cast<double>(count) * kFullCountUpTo / bytes);
    return std::max(scaled, std::min(count, floor));
}

// Fills a message with bytes that depend on its size, so a buffer left over from another size
// cannot pass for this one.
void fill_pattern(std::byte *buf, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) {
        buf[i] = static_cast<std::byte>((i * 2654435761u + bytes) >> 11);
    }
}

// Per-round-trip marks at the start, middle and end of the message: a library that delivered
// nothing, delivered a stale buffer or only part of one fails the check, at the cost of three
// words per message instead of a pass over all of it.
std::vector<size_t> stamp_offsets(size_t bytes) {
    if (bytes == 0) return {};
    if (bytes < 16) return {0};
    if (bytes < 32) return {0, bytes - 8};
    return {0, (bytes / 2) & ~size_t{7}, bytes - 8};
}

uint64_t stamp_word(uint64_t sequence, size_t offset) {
    return (sequence + 1) * 0x9E3779B97F4A7C15ull ^ (offset << 1);
}

void stamp(std::byte *buf, size_t bytes, uint64_t sequence) {
    for (size_t off : stamp_offsets(bytes)) {
        uint64_t w = stamp_word(sequence, off);
        std::memcpy(buf + off, &w, std::min<size_t>(8, bytes - off));
    }
}

bool has_stamp(const std::byte *buf, size_t bytes, uint64_t sequence) {
    for (size_t off : stamp_offsets(bytes)) {
        uint64_t w = stamp_word(sequence, off);
        if (std::memcmp(buf + off, &w, std::min<size_t>(8, bytes - off)) != 0) return false;
    }
    return true;
}

void check_arrival(const msg_completion_t &c, const std::byte *buf, size_t bytes, int from,
                   uint64_t sequence) {
    if (c.status != MSG_OK) throw Error(std::string("receive failed: ") + msg_strerror(c.status));
    if (c.source != from || c.tag != kPingTag || c.bytes != bytes) {
        throw Error("received " + std::to_string(c.bytes) + " bytes from rank " +
                    std::to_string(c.source) + " tag " + std::to_string(c.tag) + ", expected " +
                    std::to_string(bytes) + " bytes from rank " + std::to_string(from) + " tag " +
                    std::to_string(kPingTag));
    }
    if (!has_stamp(buf, bytes, sequence)) {
        throw Error("payload check failed: " + std::to_string(bytes) + "-byte message " +
                    std::to_string(sequence) + " does not carry its marks");
    }
}

struct Result {
    size_t bytes;
    long iterations;
    double latency_us;
    double bandwidth_mbps;
};

// msg_recv has no time limit, so a library that loses a message would hang the benchmark
// silently; the watchdog turns that into a message naming the size, and a failed exit.
class Watchdog {
  public:
    Watchdog(int rank, long timeout_s)
        : thread_([this, rank, timeout_s](std::stop_token stop) { watch(stop, rank, timeout_s); }) {
    }

    // A size begins, or one of its round trips (or echoes) is done.
    void progress(size_t bytes) {
        bytes_.store(bytes, std::memory_order_relaxed);
        ticks_.fetch_add(1, std::memory_order_relaxed);
    }

  private:
    void watch(std::stop_token stop, int rank, long timeout_s) {
        uint64_t seen = ticks_.load();
        Clock::time_point last = Clock::now();
        while (!stop.stop_requested()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            uint64_t now = ticks_.load(std::memory_order_relaxed);
            if (now != seen) {
                seen = now;
                last = Clock::now();
            } else if (seconds_since(last) > static_cast<double>(timeout_s)) {
                std::fprintf(stderr,
                             "msg-pingpong: rank %d: no %zu-byte message arrived for %ld s; "
                             "giving up\n",
                             rank, bytes_.load(), timeout_s);
                std::_Exit(1);
            }
        }
    }

    std::atomic<uint64_t> ticks_{0};
    std::atomic<size_t> bytes_{0};
    std::jthread thread_;  // last: starts after the counters exist, stops before they go
};

// The two ends of the test; both walk the same sizes and message sequence numbers.
class PingPong {
  public:
    PingPong(Context &ctx, size_t largest, Watchdog &watchdog)
        : ctx_(ctx), in_(largest), out_(largest), watchdog_(watchdog) {}

    // Rank 0: times `count` round trips after `warmup` untimed ones.
    Result ping(size_t bytes, long warmup, long count) {
        watchdog_.progress(bytes);
        fill_pattern(out_.data(), bytes);
        std::memset(in_.data(), 0, bytes);
        msg_completion_t c{};
        Clock::time_point start = Clock::now();
        for (long i = 0; i < warmup + count; ++i, ++sequence_) {
            if (i == warmup) start = Clock::now();
            stamp(out_.data(), bytes, sequence_);
            check(msg_send(ctx_.get(), 1, kPingTag, out_.data(), bytes), "msg_send");
            check(msg_recv(ctx_.get(), 1, kPingTag, in_.data(), in_.size(), &c), "msg_recv");
            check_arrival(c, in_.data(), bytes, 1, sequence_);
            watchdog_.progress(bytes);
        }
        double elapsed_us = seconds_since(start) * 1e6;
        // Outside the timed loop: the last echo must match what was sent, byte for byte.
        if (std::memcmp(in_.data(), out_.data(), bytes) != 0) {
            throw Error("payload check failed: the " + std::to_string(bytes) +
                        "-byte echo differs from the message sent");
        }
        double latency_us = elapsed_us / (2.0 * static_cast<double>(count));
        double mbps = bytes == 0 ? 0.0 : static_cast<double>(bytes) / latency_us;
        return {bytes, count, latency_us, mbps};
    }

    // Rank 1: sends every message straight back from the buffer it arrived in.
    void pong(size_t bytes, long total) {
        watchdog_.progress(bytes);
        std::memset(in_.data(), 0, bytes);
        msg_completion_t c{};
        for (long i = 0; i < total; ++i, ++sequence_) {
            check(msg_recv(ctx_.get(), 0, kPingTag, in_.data(), in_.size(), &c), "msg_recv");
            check_arrival(c, in_.data(), bytes, 0, sequence_);
            check(msg_send(ctx_.get(), 0, kPingTag, in_.data(), bytes), "msg_send");
            watchdog_.progress(bytes);
        }
        // out_ is free on this rank: rebuild in it the last message rank 0 sent.
        fill_pattern(out_.data(), bytes);
        stamp(out_.data(), bytes, sequence_ - 1);
        if (total > 0 && std::memcmp(in_.data(), out_.data(), bytes) != 0) {
            throw Error("payload check failed: the last " + std::to_string(bytes) +
                        "-byte message differs from the one rank 0 sent");
        }
    }

  private:
    Context &ctx_;
    AlignedBuffer in_;
    AlignedBuffer out_;
    uint64_t sequence_ = 0;
    Watchdog &watchdog_;
};

void print_table(const msg_info_t &info, const std::vector<Result> &results) {
    std::printf(
        "# msg-pingpong: provider %s, protocol %s, mode %s, eager_max %zu B, "
        "buffer %zu B, connect %.4f s\n",
        info.provider, protocol_name(info.long_protocol), mode_name(info.restricted),
        info.eager_max, info.buffer_size, info.connect_seconds);
    std::printf("# one-way time = round trip / 2; MB/s = bytes / one-way time, MB = 10^6 B\n");
    std::printf("%12s %10s %14s %16s\n", "bytes", "iters", "latency_us", "bandwidth_MB/s");
    for (const Result &r : results) {
        std::printf("%12zu %10ld %14.3f %16.3f\n", r.bytes, r.iterations, r.latency_us,
                    r.bandwidth_mbps);
    }
}

void print_results_json(const msg_info_t &info, const std::vector<Result> &results) {
    Json rows = Json::array();
    for (const Result &r : results)
        rows.push_back({{"bytes", r.bytes},
                        {"latency_us", json_number(r.latency_us, 3)},
                        {"bandwidth_mbps", json_number(r.bandwidth_mbps, 3)}});
    print_json({{"benchmark", "msg-pingpong"},
                {"provider", info.provider},
                {"protocol", protocol_name(info.long_protocol)},
                {"mode", mode_name(info.restricted)},
                {"results", rows}});
}

int run(const Options &o, int &rank) {
    msg_config_t config = o.fabric.config();
    Context ctx(config);
    msg_info_t info = ctx.info();
    rank = info.rank;
    if (info.size != 2) {
        if (info.rank == 0) {
            std::fprintf(stderr,
                         "msg-pingpong: needs exactly 2 ranks, the job has %d "
                         "(run it as: msgrun -n 2 msg-pingpong)\n",
                         info.size);
        }
        return 1;
    }

    std::vector<size_t> sizes = message_sizes(o);
    size_t largest = sizes.empty() ? 0 : sizes.back();
    std::vector<Result> results;
    {
        Watchdog watchdog(rank, o.timeout_s);
        PingPong test(ctx, largest, watchdog);
        for (size_t bytes : sizes) {
            long count = scaled_count(o.iterations, 20, bytes);
            long warmup = scaled_count(o.warmup, 2, bytes);
            if (rank == 0) {
                results.push_back(test.ping(bytes, warmup, count));
            } else {
                test.pong(bytes, warmup + count);
            }
        }
    }
    ctx.finalize();

    if (info.rank == 0) {
        if (o.json) {
            print_results_json(info, results);
        } else {
            print_table(info, results);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msg-pingpong");
    return viaduct::bench::benchmark_main("msg-pingpong", kDescription, argc, argv, add_options,
                                          run);
}
