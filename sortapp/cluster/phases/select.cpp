// Phase 3a, exact selection (parallel_select.hpp): the monitor drives rounds of sampling and
// counting; every node answers both questions on its shadow thread, from its work file, while
// its sorting thread waits for the next order. A reply that does not decode, or does not fit
// the round, fails the job naming the node.
#include <algorithm>
#include <mutex>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// A question decoded and answered from the work file; a refusal's text otherwise.
template <typename Request, typename AnswerFn>
void answer(Node &node, rio_t *rio, rio_incoming_t *in, const rio_request_info_t &info,
            const char *refusal, AnswerFn answer_fn) {
    Request q;
    if (!decode(info.data, info.len, q)) {
        reply_error(rio, in, refusal);
        return;
    }
    reply(rio, in, answer_fn(*node.source, static_cast<uint32_t>(node.rank), q));
}

// The most bytes a node's answer to the request can take (codec.hpp: a vector is a u64 count
// and its items; an Element a u64-prefixed key, a u32 node and a u64 position), so the monitor
// posts no more receive memory per node and round than the answer can fill.
size_t sample_reply_bytes(const SampleRequest &q, size_t key_size) {
    size_t n = 8;
    for (size_t j = 0; j < q.windows.size(); ++j) {
        const uint64_t width = q.windows[j].hi - q.windows[j].lo;
        const bool whole = j < q.whole.size() && q.whole[j];
        const uint64_t count = whole || width <= q.samples ? width : uint64_t(q.samples) + 1;
        n += 8 + count * (8 + key_size + 4 + 8);
    }
    return n;
}

size_t count_reply_bytes(const CountRequest &q) {
    size_t n = 8;
    for (const auto &pivots : q.pivots) n += 8 + 8 * pivots.size();
    return n;
}

// Each node's question; room for the largest answer's bound, and some: an answer a little
// past it is refused for what it says (check_samples, check_counts) rather than as truncated.
template <typename Request, typename Bound>
std::vector<Answer> ask_each(Monitor &m, uint32_t command, const std::vector<Request> &asked,
                             Bound bound) {
    size_t most = 0;
    for (const Request &q : asked) most = std::max(most, bound(q));
    return m.ask_all(
        command, RIO_TARGET_SHADOW, [&](int i) { return encode(asked[static_cast<size_t>(i)]); },
        most + 4096);
}

// One round: samples from every window, pivots, and every node's counts below them. Every
// reply is checked against the round before any is taken.
Status select_round(Monitor &m, Selector &sel) {
    const auto n = static_cast<uint32_t>(m.nodes());
    const size_t key_size = m.opts().params.key_size;
    std::vector<SampleRequest> sample_requests;
    for (uint32_t i = 0; i < n; ++i) sample_requests.push_back(sel.sample_request(i));
    auto answers = ask_each(m, kCmdSamples, sample_requests, [&](const SampleRequest &q) {
        return sample_reply_bytes(q, key_size);
    });
    std::vector<SampleReply> samples;
    SORTAPP_TRY(
        decode_answers(m, answers, "phase 3a sampling", samples,
                       [&](uint32_t i, const SampleReply &r) { return sel.check_samples(i, r); }));
    for (uint32_t i = 0; i < samples.size(); ++i) sel.take_samples(i, samples[i]);
    sel.choose_pivots();
    if (sel.done()) return Status::ok();
    std::vector<CountRequest> count_requests;
    for (uint32_t i = 0; i < n; ++i) count_requests.push_back(sel.count_request(i));
    answers = ask_each(m, kCmdCounts, count_requests, count_reply_bytes);
    std::vector<CountReply> counts;
    SORTAPP_TRY(
        decode_answers(m, answers, "phase 3a counting", counts,
                       [&](uint32_t i, const CountReply &r) { return sel.check_counts(i, r); }));
    for (uint32_t i = 0; i < counts.size(); ++i) sel.take_counts(i, counts[i]);
    return Status::ok();
}

}  // namespace

void serve_select(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *node = static_cast<Node *>(arg);
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    std::lock_guard<std::mutex> lk(node->source_mu);
    if (!node->source) {
        reply_error(rio, in, "work file not ready");
        return;
    }
    try {
        if (info.command == kCmdSamples)
            answer<SampleRequest>(*node, rio, in, info, "malformed sample request", answer_samples);
        else
            answer<CountRequest>(*node, rio, in, info, "malformed count request", answer_counts);
    } catch (const std::exception &e) {
        reply_error(rio, in, e.what());
    }
}

Status monitor_select(Monitor &m) {
    const double t = now_seconds();
    std::vector<uint64_t> sizes;
    for (const LocalDone &d : m.job.local) sizes.push_back(d.records);
    Selector sel(sizes, static_cast<uint32_t>(m.nodes()));
    Status s;
    while (s && !sel.done()) s = select_round(m, sel);
    m.job.select_s = now_seconds() - t;
    m.job.rounds = sel.rounds();
    SORTAPP_TRY(s);
    m.job.starts = sel.starts();
    const auto &starts = m.job.starts;
    for (size_t j = 0; j + 1 < starts.size(); ++j) {
        uint64_t c = 0;
        for (size_t i = 0; i < starts[j].size(); ++i) c += starts[j + 1][i] - starts[j][i];
        m.job.partition_records.push_back(c);
    }
    m.progress("phase 3a: %u rounds, %.3f s", m.job.rounds, m.job.select_s);
    return Status::ok();
}

}  // namespace sortapp::cluster
