// The DataPump's --timeline: the sink's counters sampled through the copy by the sampler the
// cluster sort's nodes use, and the timeline of that one process written when the copy ends.
#pragma once

#include <string>
#include <vector>

#include "pump.hpp"
#include "viaduct/sampler.hpp"

namespace pump {

// The sink's steps as its timeline names them: "starting" (hearing the source, checking and
// creating the output), "pumping" (the river's batches written as they come), "committing"
// (the river closed, the output flushed and renamed into place).
const std::vector<std::string> &sink_phases();

// Moves `progress` (may be null) to the step called `name` (one of sink_phases()).
void set_phase(SinkProgress *progress, const std::string &name);

// "" when the timeline may be written into `dir`, else why not. Checked by the sink before
// the copy starts, so that a refused directory refuses the copy and leaves no output: the
// directory itself when it exists, else the nearest one above it that does (a directory made
// in one whose entries every user may rename could be swapped under the writer).
std::string timeline_refusal(const std::string &dir);

class Timeline {
  public:
    // Starts sampling this process at o.sample_hz: its step and bytes from `progress`, the
    // network bytes from msg_get_stats(ctx), the disk of the output's directory.
    Timeline(const Options &o, const msg_context_t *ctx, const SinkProgress &progress);

    // Stops sampling and writes o.timeline: one node (`rank`, this host), the sink's steps,
    // `report` beside the pictures (its first line is the title). A copy that failed before it
    // began pumping has no timeline. Returns 0, or 1 after saying why on stderr; the output,
    // already in place after a copy that worked, is not touched either way.
    int finish(int rank, bool copied, const std::string &report);

  private:
    const Options &o_;
    const SinkProgress &progress_;
    viaduct::Sampler sampler_;
};

}  // namespace pump
