// Encoding of the cluster sort's messages (see messages.hpp): one encoder and one decoder
// for all of them, walking each message's field list, and what each may plausibly hold.
#include "messages.hpp"

#include <algorithm>
#include <cmath>

#include "codec.hpp"

namespace sortapp::cluster {

namespace {

// Rates and times: what a node measured, so never negative, NaN or infinite.
bool figure(double v) {
    return std::isfinite(v) && v >= 0;
}

// Phase 3a's messages are checked against the round by their receiver (parallel_select.hpp).
template <typename Message>
bool plausible(const Message &) {
    return true;
}

bool plausible(const JobParams &p) {
    return p.block_bytes >= p.record_size && p.block_bytes <= kMaxBlockBytes &&
           p.read_depth >= kMinReadDepth && p.read_depth <= kMaxReadDepth &&
           p.algorithm <= kRiver && p.passes <= 2 && p.remeasure <= 1;
}

bool plausible(const PhaseFigures &f) {
    return figure(f.seconds) && figure(f.cpu_seconds) && figure(f.expected_seconds);
}

bool plausible(const NodeCheck &c) {
    return figure(c.disk_read_mb_s) && figure(c.disk_write_mb_s) && figure(c.disk_mixed_mb_s);
}

bool plausible(const LocalDone &d) {
    return std::all_of(d.phases.begin(), d.phases.end(),
                       [](const PhaseFigures &f) { return plausible(f); });
}

bool plausible(const RiverDone &d) {
    return d.one_pass <= 1 && std::all_of(d.phases.begin(), d.phases.end(),
                                          [](const PhaseFigures &f) { return plausible(f); });
}

// Why a counters answer is refused before its samples are looked at: "" when it is not.
std::string counters_fault(const CountersAnswer &a) {
    if (!plausible(a.progress)) return "a progress time that is not a time";
    if (a.progress.phase.size() > kMaxPhaseNameBytes ||
        a.progress.resource.size() > kMaxPhaseNameBytes)
        return "a progress phase of " +
               std::to_string(std::max(a.progress.phase.size(), a.progress.resource.size())) +
               " bytes";
    if (a.phase_names.size() > kMaxPhaseNames)
        return std::to_string(a.phase_names.size()) + " phase names, more than " +
               std::to_string(kMaxPhaseNames);
    for (const std::string &name : a.phase_names)
        if (name.empty() || name.size() > kMaxPhaseNameBytes)
            return "a phase name of " + std::to_string(name.size()) + " bytes";
    if (a.samples.size() % kSampleBytes != 0)
        return "samples of " + std::to_string(a.samples.size()) + " bytes, not whole samples";
    const uint64_t count = a.samples.size() / kSampleBytes;
    if (count > kMaxSamplesPerAnswer)
        return std::to_string(count) + " samples, more than " +
               std::to_string(kMaxSamplesPerAnswer);
    if (a.first > a.end || a.end - a.first < count)
        return "samples numbered past the newest the node says it has";
    return "";
}

bool plausible(const CountersAnswer &a) {
    return counters_fault(a).empty();
}

bool plausible(const RiverOrder &o) {
    return o.batch_bytes >= 4096 && o.batch_bytes <= kMaxBlockBytes;
}

bool plausible(const MergeOrder &m) {
    if (m.first.size() != m.handles.size() || m.last.size() != m.handles.size() ||
        !figure(m.network_mb_s))
        return false;
    for (size_t i = 0; i < m.handles.size(); ++i)
        if (m.first[i] > m.last[i]) return false;
    return true;
}

}  // namespace

template <typename Message>
std::vector<char> encode(const Message &m) {
    Writer w;
    Encoder{w}(m);
    return w.bytes();
}

template <typename Message>
bool decode(const void *data, size_t len, Message &m) {
    Reader r(data, len);
    Decoder{r}(m);
    return r.finished() && plausible(m);
}

std::string decode_counters(const void *data, size_t len, CountersAnswer &a) {
    Reader r(data, len);
    Decoder{r}(a);
    if (!r.finished()) return "not one encoding of the reply";
    return counters_fault(a);
}

#define SORTAPP_CLUSTER_MESSAGE(M)                \
    template std::vector<char> encode(const M &); \
    template bool decode(const void *, size_t, M &);
SORTAPP_CLUSTER_MESSAGE(JobParams)
SORTAPP_CLUSTER_MESSAGE(NodeCheck)
SORTAPP_CLUSTER_MESSAGE(LocalDone)
SORTAPP_CLUSTER_MESSAGE(MergeOrder)
SORTAPP_CLUSTER_MESSAGE(PhaseFigures)
SORTAPP_CLUSTER_MESSAGE(SampleRequest)
SORTAPP_CLUSTER_MESSAGE(SampleReply)
SORTAPP_CLUSTER_MESSAGE(CountRequest)
SORTAPP_CLUSTER_MESSAGE(CountReply)
SORTAPP_CLUSTER_MESSAGE(SampleOrder)
SORTAPP_CLUSTER_MESSAGE(RiverSamples)
SORTAPP_CLUSTER_MESSAGE(RiverOrder)
SORTAPP_CLUSTER_MESSAGE(RiverDone)
SORTAPP_CLUSTER_MESSAGE(CountersAnswer)
#undef SORTAPP_CLUSTER_MESSAGE

}  // namespace sortapp::cluster
