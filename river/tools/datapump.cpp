// datapump: copies a file from one rank's disk to another's through a river
// (the NT cluster paper's DataPump), or with --no-disk measures the path
// alone. Run under msgrun; see --help.
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "pump.hpp"
#include "pump_timeline.hpp"
#include "viaduct/fatal.hpp"

namespace {

// msgrun gives every rank the same arguments: only one speaks about them.
bool speaks() {
    const char *rank = std::getenv("VIADUCT_RANK");
    return rank == nullptr || std::atoi(rank) == 0;
}

int run(msg_context_t *ctx, const pump::Options &o) {
    msg_info_t info{};
    msg_get_info(ctx, &info);
    if (o.from >= info.size || o.to >= info.size) {
        if (info.rank == 0)
            std::fprintf(stderr,
                         "datapump: --from %d --to %d need %d ranks, the job has %d (run it under "
                         "msgrun -n N)\n",
                         o.from, o.to, (o.from > o.to ? o.from : o.to) + 1, info.size);
        return 2;
    }
    pump::Figures source{}, sink{};
    int source_status = 0, sink_status = 0;
    // The sink's rank samples itself through the copy (--timeline).
    pump::SinkProgress progress;
    std::optional<pump::Timeline> timeline;
    if (info.rank == o.to && !o.timeline.empty()) timeline.emplace(o, ctx, progress);
    if (info.rank == o.from) source_status = pump::run_source(ctx, o, &source);
    if (info.rank == o.to) sink_status = pump::run_sink(ctx, o, &sink, &source, &progress);
    const bool copied = sink_status == 0 && source_status == 0;
    if (info.rank == o.to && copied) pump::print_report(o, source, sink, info);
    std::fflush(stdout);
    if (timeline && timeline->finish(info.rank, copied,
                                     copied ? pump::report_text(o, source, sink, info) : "") != 0)
        sink_status = 1;
    return source_status != 0 || sink_status != 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("datapump");
    pump::Options o;
    const int parsed = pump::parse_options(argc, argv, speaks(), &o);
    if (parsed == 1) return 0;
    if (parsed == 2) return 2;
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) {
        std::fprintf(stderr, "datapump: joining the job: %s\n", msg_strerror(rc));
        return 1;
    }
    const int status = run(ctx, o);
    std::fflush(stdout);
    rc = msg_finalize(ctx);
    msg_destroy(ctx);
    if (status == 0 && rc != MSG_OK) {
        std::fprintf(stderr, "datapump: leaving the job: %s\n", msg_strerror(rc));
        return 1;
    }
    return status;
}
