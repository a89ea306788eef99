// Fuzz target: the decoders of the cluster sort's messages (monitor <-> nodes).
// A message that decodes must encode back to the same bytes; phase 3a's messages
// then go where they go in a job: requests to a node's answer, replies to the selector.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages.hpp"
#include "splitters.hpp"

namespace cl = sortapp::cluster;

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_cluster_messages: %s\n", what);
    std::abort();
}

// A node's sorted work file of 64 records: keys "k00".."k63".
class Records : public cl::SortedSource {
  public:
    uint64_t size() const override { return 64; }
    std::string key(uint64_t pos) const override {
        if (pos >= size()) broken("a key read past the work file");
        return {'k', static_cast<char>('0' + pos / 10), static_cast<char>('0' + pos % 10)};
    }
};

// What a node or the monitor does with a message it has decoded; refusals are exceptions.
void use(const cl::SampleRequest &q) {
    (void)cl::answer_samples(Records(), 1, q);
}
void use(const cl::CountRequest &q) {
    (void)cl::answer_counts(Records(), 1, q);
}
void use(const cl::SampleReply &r) {
    cl::Selector sel({64, 64, 64}, 3, 8);
    sel.take_samples(1, r);
    sel.choose_pivots();
}
void use(const cl::CountReply &r) {
    cl::Selector sel({64, 64, 64}, 3, 8);
    for (uint32_t i = 0; i < 3; ++i)
        sel.take_samples(i, cl::answer_samples(Records(), i, sel.sample_request(i)));
    sel.choose_pivots();
    sel.take_counts(0, r);
}
void use(const cl::JobParams &p) {
    // Phase 3b keeps read_depth buffers of block_bytes for each source node.
    if (p.read_depth < 2 || p.block_bytes < p.record_size ||
        static_cast<double>(p.read_depth) * static_cast<double>(p.block_bytes) > 4.0 * (1u << 30))
        broken("job parameters a node cannot run with accepted");
    if (p.remeasure > 1) broken("a remeasure flag that is not a flag accepted");
}
bool real(double v) {
    return std::isfinite(v) && v >= 0;
}
void use(const cl::PhaseFigures &f) {
    if (!real(f.seconds) || !real(f.cpu_seconds) || !real(f.expected_seconds))
        broken("a phase time that is not a time accepted");
}
void use(const cl::LocalDone &d) {
    for (const auto &f : d.phases) use(f);
}
void use(const cl::NodeCheck &c) {
    if (!real(c.disk_read_mb_s) || !real(c.disk_write_mb_s) || !real(c.disk_mixed_mb_s))
        broken("a disk rate that is not a rate accepted");
}
void use(const cl::MergeOrder &m) {
    if (!real(m.network_mb_s)) broken("a network rate that is not a rate accepted");
    for (size_t i = 0; i < m.handles.size(); ++i)
        if (m.first.at(i) > m.last.at(i)) broken("a record range ending before it starts accepted");
}

// The river algorithm's: splitters from any samples, checked, then used to pick.
void use(const cl::SampleOrder &) {}
void use(const cl::RiverSamples &r) {
    auto s = cl::choose_splitters(r.samples, 4);
    if (s.size() != 3) broken("not parts - 1 splitters");
    for (size_t i = 1; i < s.size(); ++i)
        if (cl::compare(s[i - 1], s[i]) > 0) broken("splitters chosen out of order");
}
void use(const cl::RiverOrder &o) {
    const uint32_t parts = static_cast<uint32_t>(o.splitters.size()) + 1;
    if (!cl::check_splitters(o.splitters, parts, 4)) return;  // refused: the node says so
    cl::Partitioner p(o.splitters, 4, 1);
    const uint8_t key[4] = {'a', 'b', 'c', 'd'};
    int k = p.pick(key, 7);
    if (k < 0 || static_cast<uint32_t>(k) >= parts) broken("a record picked outside the sinks");
}
void use(const cl::RiverDone &d) {
    if (d.one_pass > 1) broken("a one-pass flag that is not a flag accepted");
    for (const auto &f : d.phases) use(f);
}
// A node's counters: what the monitor then copies out and stores is bounded.
void use(const cl::CountersAnswer &a) {
    use(a.progress);
    if (a.phase_names.size() > cl::kMaxPhaseNames) broken("too many phase names accepted");
    for (const auto &name : a.phase_names)
        if (name.empty() || name.size() > cl::kMaxPhaseNameBytes)
            broken("a phase name of no length or too long accepted");
    const size_t count = a.samples.size() / cl::kSampleBytes;
    if (a.samples.size() % cl::kSampleBytes != 0) broken("part of a sample accepted");
    if (count > cl::kMaxSamplesPerAnswer) broken("more samples than an answer holds accepted");
    if (a.first > a.end || a.end - a.first < count) broken("samples past the newest accepted");
    if (cl::encode(a).size() > cl::kCountersAnswerBytes)
        broken("an answer larger than the monitor's reply buffer accepted");
    cl::CountersAnswer again;
    const std::vector<char> bytes = cl::encode(a);
    if (!cl::decode_counters(bytes.data(), bytes.size(), again).empty())
        broken("decode and decode_counters disagree");
}

// exact: the encoding is canonical, so the message itself must come back.
template <typename Message>
void round_trip(const uint8_t *data, size_t size, bool exact) {
    Message m;
    if (!cl::decode(data, size, m)) return;
    try {
        use(m);
    } catch (const std::invalid_argument &) {
    }
    const std::vector<char> once = cl::encode(m);
    if (exact && std::vector<char>(data, data + size) != once)
        broken("a decoded message encodes to other bytes");
    Message again;
    if (!cl::decode(once.data(), once.size(), again)) broken("an encoded message does not decode");
    if (cl::encode(again) != once) broken("decode and encode disagree");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const uint8_t *msg = data + 1;
    const size_t len = size - 1;
    switch (data[0] % 14) {
        case 0:
            round_trip<cl::JobParams>(msg, len, true);
            break;
        case 1:
            round_trip<cl::NodeCheck>(msg, len, true);
            break;
        case 2:
            round_trip<cl::LocalDone>(msg, len, true);
            break;
        case 3:
            round_trip<cl::MergeOrder>(msg, len, true);
            break;
        case 4:
            round_trip<cl::PhaseFigures>(msg, len, true);
            break;
        case 5:
            // `whole` is a flag sent as a u32: any non-zero value reads as 1.
            round_trip<cl::SampleRequest>(msg, len, false);
            break;
        case 6:
            round_trip<cl::SampleReply>(msg, len, true);
            break;
        case 7:
            round_trip<cl::CountRequest>(msg, len, true);
            break;
        case 8:
            round_trip<cl::SampleOrder>(msg, len, true);
            break;
        case 9:
            round_trip<cl::RiverSamples>(msg, len, true);
            break;
        case 10:
            round_trip<cl::RiverOrder>(msg, len, true);
            break;
        case 11:
            round_trip<cl::RiverDone>(msg, len, true);
            break;
        case 13:
            round_trip<cl::CountersAnswer>(msg, len, true);
            break;
        default:
            round_trip<cl::CountReply>(msg, len, true);
    }
    return 0;
}
