// What the monitor holds of every node's counter samples: taken from the answers to its
// liveness and counters questions (kCmdProgress, kCmdCounters) once each is checked, with the
// offset between the node's clock and the monitor's; and all of them put on one time axis for
// the timeline and the needle finder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages.hpp"
#include "sortapp/status.hpp"
#include "viaduct/counters.hpp"
#include "viaduct/timeline.hpp"

namespace sortapp::cluster {

// The most samples the monitor keeps of one node (the oldest go first): an hour at 18 a second,
// whatever a node sends.
constexpr size_t kMaxHeldSamples = 64 * 1024;

// CLOCK_REALTIME, microseconds since the epoch.
int64_t realtime_us();

struct NodeCounters {
    std::vector<std::string> phase_names;         // the node's table, as it last sent it
    std::vector<viaduct::CounterSample> samples;  // on the node's clock, in the node's order
    uint64_t next = 0;  // the number of the first sample not yet received: what to ask for
    uint64_t end = 0;   // one past the newest sample the node has said it has
    uint64_t lost = 0;  // samples never received: dropped from the node's ring, or from here
    // The node's clock minus the monitor's, from the exchange with the shortest round trip so
    // far (the node read its clock somewhere inside it: the midpoint is off by at most half).
    bool clock_known = false;
    int64_t offset_us = 0;
    int64_t round_trip_us = 0;

    // Takes the answer to a question for samples from number `asked`, sent at `sent_us` and
    // answered at `received_us` (the monitor's realtime_us; 0: unknown). Refuses, taking none
    // of it, an answer no node could mean: samples from before the one asked for, a table of
    // phase names that does not extend the last, a sample whose phase is outside the table, a
    // time no clock reads. The error says which.
    Status take(uint64_t asked, const CountersAnswer &a, int64_t sent_us, int64_t received_us);
    // Every sample the node had when it last answered has arrived.
    bool complete() const { return next >= end; }

  private:
    void observe_clock(int64_t node_us, int64_t sent_us, int64_t received_us);
};

// Every node's samples on the monitor's clock, each node's in time order, their phases
// numbered in one table (the nodes' names in the order they first appear, node by node), with
// the node's host (from its check, "host:device").
struct Collated {
    std::vector<std::string> phase_names;
    std::vector<viaduct::timeline::Node> nodes;
};
Collated collate(const std::vector<NodeCounters> &counters, const std::vector<NodeCheck> &checks);

}  // namespace sortapp::cluster
