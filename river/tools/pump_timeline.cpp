// The DataPump's --timeline: what the sampler reads of the sink (its step, its bytes, the
// messaging layer's traffic) and the one-node timeline written at the end.
#include "pump_timeline.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "viaduct/counters.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"
#include "viaduct/timeline.hpp"

namespace pump {

namespace {

// The sampler's view of the sink. msg_get_stats may fail while libmsg is busy: the last
// figures it gave stand (the sampler takes one sample at a time, so `last` needs no lock).
viaduct::Sampler::ProgressFn sink_progress(const msg_context_t *ctx, const SinkProgress &progress) {
    return [ctx, &progress, last = msg_stats_t{}]() mutable {
        msg_stats_t now{};
        if (msg_get_stats(ctx, &now) == MSG_OK) last = now;
        viaduct::Sampler::Progress p;
        p.phase = progress.phase.load(std::memory_order_relaxed);
        // The river's records are bytes.
        p.bytes = p.records = progress.bytes.load(std::memory_order_relaxed);
        p.net_sent_bytes = last.bytes_sent;
        p.net_received_bytes = last.bytes_received;
        return p;
    };
}

// What a copy that failed shows beside its pictures (its error went to stderr).
std::string failed_report(const Options &o) {
    if (o.no_disk)
        return "datapump --no-disk: rank " + std::to_string(o.from) + " to rank " +
               std::to_string(o.to) + ", failed\n";
    return "datapump: " + std::to_string(o.from) + ":" + o.input + " to " + std::to_string(o.to) +
           ":" + o.output + ", failed\n";
}

}  // namespace

const std::vector<std::string> &sink_phases() {
    static const std::vector<std::string> names = {"starting", "pumping", "committing"};
    return names;
}

void set_phase(SinkProgress *progress, const std::string &name) {
    const std::vector<std::string> &names = sink_phases();
    const auto at = std::find(names.begin(), names.end(), name);
    if (progress != nullptr && at != names.end())
        progress->phase.store(static_cast<uint32_t>(at - names.begin()), std::memory_order_relaxed);
}

std::string timeline_refusal(const std::string &dir) {
    const std::string why = viaduct::timeline::refusal(dir);
    return why.empty() ? "" : "not writing the timeline there: " + why;
}

Timeline::Timeline(const Options &o, const msg_context_t *ctx, const SinkProgress &progress)
    : o_(o),
      progress_(progress),
      sampler_(o.sample_hz, viaduct::ring_for_an_hour(o.sample_hz),
               o.no_disk ? "" : viaduct::block_device_for(viaduct::path_dir(o.output)),
               sink_progress(ctx, progress)) {
    sampler_.start();
}

int Timeline::finish(int rank, bool copied, const std::string &report) {
    sampler_.stop();
    if (!copied && progress_.phase.load() == 0) return 0;
    viaduct::timeline::Input in;
    in.report = copied ? report : failed_report(o_);
    in.title = in.report.substr(0, in.report.find('\n'));
    in.phase_names = sink_phases();
    in.nodes.push_back({rank, viaduct::timeline::host_name(), sampler_.samples()});
    if (sampler_.dropped() > 0)
        in.report += "the timeline keeps the last " + std::to_string(sampler_.capacity()) +
                     " samples; the " + std::to_string(sampler_.dropped()) +
                     " before them were dropped\n";
    try {
        viaduct::timeline::write(o_.timeline, in);
    } catch (const std::runtime_error &e) {
        return fail(std::string(copied ? "the copy is complete, but " : "") +
                    "the timeline was not written: " + e.what());
    }
    if (!o_.json)
        std::fprintf(stderr, "datapump: timeline in %s (timeline.jsonl, .csv, .png, .html)\n",
                     o_.timeline.c_str());
    return 0;
}

}  // namespace pump
