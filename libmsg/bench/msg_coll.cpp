// msg-coll: OSU-style latency of libmsg's collectives (msg_bcast, msg_allreduce, msg_alltoall)
// from a few bytes to many MiB; mpi-coll measures Open MPI's the same way, and
// scripts/coll-compare.py runs both and prints the ratios.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "coll_pattern.h"
#include "msg_session.hpp"
#include "viaduct/fatal.hpp"

namespace {

using namespace viaduct::bench;

struct Options {
    std::vector<std::string> collectives = {"bcast", "allreduce", "alltoall"};
    size_t min_bytes = 8;
    size_t max_bytes = 16 * MiB;
    long iterations = 200;
    bool json = false;
    FabricOptions fabric;

    void check() const {
        if (min_bytes > max_bytes) throw UsageError("--min-bytes is larger than --max-bytes");
    }
};

const char kDescription[] =
    "msgrun -n P msg-coll [OPTIONS]\n"
    "OSU-style latency of libmsg's collectives: for each size (the minimum, then x4 up to the\n"
    "maximum), every rank runs the collective back to back (a few warm-up calls, then the timed\n"
    "ones), between barriers. Latency = a rank's elapsed time / calls, the mean over ranks\n"
    "(min and max beside it). Sizes: msg_bcast's buffer, msg_allreduce's vector (uint32 sum),\n"
    "msg_alltoall's block per peer. Bandwidth = bytes / latency, MB = 10^6 B. Each size's\n"
    "results are checked against the expected pattern before any figure is printed.";

void add_options(CLI::App &app, Options &o) {
    app.add_option("--collectives", o.collectives,
                   "comma-separated: bcast, allreduce, alltoall (default all three)")
        ->delimiter(',')
        ->check(CLI::IsMember({"bcast", "allreduce", "alltoall"}))
        ->type_name("LIST");
    viaduct::cli::add_size(app, "--min-bytes", o.min_bytes, "smallest size (default 8)", 4);
    viaduct::cli::add_size(app, "--max-bytes", o.max_bytes, "largest size (default 16M)", 4);
    add_long(app, "--iters", o.iterations, 1, 1000000,
             "timed calls up to 8 KiB (default 200); larger sizes scale down to at least 5");
    app.add_flag("--json", o.json, "print one JSON object instead of a table");
}

unsigned char *bytes_of(const AlignedBuffer &b) {
    return reinterpret_cast<unsigned char *>(b.data());
}

struct Cell {
    std::string collective;
    size_t bytes = 0;
    long iterations = 0;
    double mean_us = 0, min_us = 0, max_us = 0;
};

class Collectives {
  public:
    Collectives(Context &ctx, const msg_info_t &info, size_t max_bytes)
        : ctx_(ctx), rank_(info.rank), size_(info.size) {
        const size_t blocks = static_cast<size_t>(size_);
        send_ = AlignedBuffer(max_bytes * blocks);
        recv_ = AlignedBuffer(max_bytes * blocks);
    }

    Cell measure(int kind, size_t bytes, long iterations) {
        prepare(kind, bytes, 0);
        for (long i = 0; i < coll_warmup(iterations); ++i) call(kind, bytes);
        check(msg_barrier(ctx_.get()), "msg_barrier");
        prepare(kind, bytes, 1);
        Clock::time_point start = Clock::now();
        for (long i = 0; i < iterations; ++i) call(kind, bytes);
        double mine = seconds_since(start) * 1e6 / static_cast<double>(iterations);
        if (!coll_check(kind, bytes_of(recv_), bytes, rank_, size_, 1)) {
            throw Error(std::string(coll_kind_name(kind)) + " of " + std::to_string(bytes) +
                        " B: the result does not match the expected pattern");
        }
        Cell c{coll_kind_name(kind), bytes, iterations, 0, 0, 0};
        c.mean_us = reduce(mine, MSG_SUM) / size_;
        c.min_us = reduce(mine, MSG_MIN);
        c.max_us = reduce(mine, MSG_MAX);
        check(msg_barrier(ctx_.get()), "msg_barrier");
        return c;
    }

  private:
    void prepare(int kind, size_t bytes, unsigned round) {
        coll_fill(kind, bytes_of(send_), bytes_of(recv_), bytes, rank_, size_, round);
    }

    void call(int kind, size_t bytes) {
        switch (kind) {
            case COLL_BCAST:
                check(msg_bcast(ctx_.get(), rank_ == 0 ? send_.data() : recv_.data(), bytes, 0),
                      "msg_bcast");
                break;
            case COLL_ALLREDUCE:
                check(msg_allreduce(ctx_.get(), send_.data(), recv_.data(), bytes / 4, MSG_UINT32,
                                    MSG_SUM),
                      "msg_allreduce");
                break;
            default:
                check(msg_alltoall(ctx_.get(), send_.data(), bytes, recv_.data()), "msg_alltoall");
                break;
        }
    }

    double reduce(double v, int op) {
        double out = 0;
        check(msg_allreduce(ctx_.get(), &v, &out, 1, MSG_DOUBLE, op), "msg_allreduce (results)");
        return out;
    }

    Context &ctx_;
    int rank_;
    int size_;
    AlignedBuffer send_;
    AlignedBuffer recv_;
};

void print_table(const msg_info_t &info, const std::vector<Cell> &cells) {
    std::printf("# msg-coll: %d ranks, provider %s, protocol %s, mode %s\n", info.size,
                info.provider, protocol_name(info.long_protocol), mode_name(info.restricted));
    std::printf("%-10s %10s %7s %12s %12s %12s %12s\n", "collective", "bytes", "iters",
                "latency_us", "min_us", "max_us", "MB/s");
    for (const Cell &c : cells) {
        std::printf("%-10s %10zu %7ld %12.2f %12.2f %12.2f %12.1f\n", c.collective.c_str(), c.bytes,
                    c.iterations, c.mean_us, c.min_us, c.max_us,
                    static_cast<double>(c.bytes) / c.mean_us);
    }
}

void print_results_json(const msg_info_t &info, const std::vector<Cell> &cells) {
    Json results = Json::array();
    for (const Cell &c : cells) {
        results.push_back(
            {{"collective", c.collective},
             {"bytes", c.bytes},
             {"iterations", c.iterations},
             {"latency_us", json_number(c.mean_us, 3)},
             {"min_latency_us", json_number(c.min_us, 3)},
             {"max_latency_us", json_number(c.max_us, 3)},
             {"bandwidth_mbps", json_number(static_cast<double>(c.bytes) / c.mean_us, 3)}});
    }
    print_json({{"benchmark", "msg-coll"},
                {"ranks", info.size},
                {"provider", info.provider},
                {"protocol", protocol_name(info.long_protocol)},
                {"mode", mode_name(info.restricted)},
                {"results", results}});
}

int run(const Options &o, int &rank) {
    msg_config_t config = o.fabric.config();
    Context ctx(config);
    msg_info_t info = ctx.info();
    rank = info.rank;
    std::vector<Cell> cells;
    {
        Collectives bench(ctx, info, o.max_bytes);
        for (const std::string &name : o.collectives) {
            const int kind = coll_kind_from_name(name.c_str());
            for (size_t bytes = o.min_bytes; bytes <= o.max_bytes;
                 bytes = coll_next_size(bytes, o.max_bytes)) {
                cells.push_back(bench.measure(kind, bytes, coll_iterations(o.iterations, bytes)));
            }
        }
    }
    ctx.finalize();
    if (rank == 0) {
        if (o.json) {
            print_results_json(info, cells);
        } else {
            print_table(info, cells);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msg-coll");
    return viaduct::bench::benchmark_main("msg-coll", kDescription, argc, argv, add_options, run);
}
