// Every node's counters over time (the NOW-Sort tuning paper's cpubar and diskbar): each node
// samples its counters from its start to its end into a bounded ring, and answers the
// monitor's liveness and counters questions with its progress and the samples from the one
// asked for on. The monitor asks at the check (which also gives each node's clock offset),
// meanwhile with every liveness question, and at the end until every sample has come: a node
// that dies leaves what it had sent.
#include "monitor/counters.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// The ring holds an hour (viaduct::ring_for_an_hour), no more than the monitor keeps of a node.
static_assert(viaduct::kHourRingSamples <= kMaxHeldSamples);

// What the node says of itself at each sample: its phase's index in its table, the bytes done
// (and so the records) and what libmsg has sent and received.
viaduct::Sampler::Progress progress_of(Node &n) {
    viaduct::Sampler::Progress p;
    uint64_t record_size = 0;
    {
        std::lock_guard<std::mutex> lk(n.progress_mu);
        p.phase = n.phase_index;
        p.bytes = n.progress_done;
        record_size = n.progress_record_size;
    }
    p.records = record_size > 0 ? p.bytes / record_size : 0;
    msg_stats_t st{};
    if (msg_get_stats(n.msg, &st) == MSG_OK) {
        p.net_sent_bytes = st.bytes_sent;
        p.net_received_bytes = st.bytes_received;
    }
    return p;
}

// The samples from number `first` on, at most kMaxSamplesPerAnswer, into the answer (a
// sample's number is its place since the sampler started: Sampler::samples_from).
void add_samples(const viaduct::Sampler &sampler, uint64_t first, CountersAnswer &a) {
    const std::vector<viaduct::CounterSample> got =
        sampler.samples_from(first, kMaxSamplesPerAnswer, &a.first, &a.end);
    a.samples.resize(got.size() * kSampleBytes);
    if (!got.empty()) std::memcpy(a.samples.data(), got.data(), got.size() * kSampleBytes);
}

}  // namespace

void start_sampling(Node &n) {
    try {
        n.sampler = std::make_unique<viaduct::Sampler>(
            n.opts.sample_hz, viaduct::ring_for_an_hour(n.opts.sample_hz),
            viaduct::block_device_for(n.scratch), [&n] { return progress_of(n); });
        // Every process of the job has joined it by now: the mates found are all there are.
        n.sampler->count_job_mates();
        n.sampler->start();
    } catch (const std::exception &e) {
        // The sort does not need its counters: it goes on, and the monitor gets none.
        std::fprintf(stderr, "sortapp: %s: not sampling its counters: %s\n", whereabouts().c_str(),
                     e.what());
        n.sampler.reset();
    }
}

void stop_sampling(Node &n) {
    if (!n.sampler) return;
    try {
        n.sampler->stop();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "sortapp: %s: sampling its counters: %s\n", whereabouts().c_str(),
                     e.what());
    }
}

void serve_counters(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *n = static_cast<Node *>(arg);
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    uint64_t first = 0;
    if (info.len != sizeof first) {
        reply_error(rio, in, "malformed counters question");
        return;
    }
    std::memcpy(&first, info.data, sizeof first);
    CountersAnswer a;
    if (n->sampler) add_samples(*n->sampler, first, a);
    {
        // After the samples: the table then names every phase they index.
        std::lock_guard<std::mutex> lk(n->progress_mu);
        a.progress.phase = n->progress_phase.substr(0, kMaxPhaseNameBytes);
        a.progress.bytes_read = n->progress_done;
        a.progress.bytes_written = n->progress_total;
        a.phase_names = n->phase_names;
    }
    a.clock_us = static_cast<uint64_t>(realtime_us());
    reply(rio, in, a);
}

Status ask_counters(Monitor &m, const char *step, bool &complete) {
    std::vector<uint64_t> asked;
    for (const NodeCounters &c : m.job.counters) asked.push_back(c.next);
    auto answers = m.ask_all(
        kCmdCounters, RIO_TARGET_SHADOW,
        [&](int i) {
            const char *p = reinterpret_cast<const char *>(&asked[static_cast<size_t>(i)]);
            return std::vector<char>(p, p + sizeof(uint64_t));
        },
        kCountersAnswerBytes);
    SORTAPP_TRY(m.failure(answers, step));
    complete = true;
    for (size_t i = 0; i < answers.size(); ++i) {
        CountersAnswer a;
        std::string why = decode_counters(answers[i].data.data(), answers[i].data.size(), a);
        if (why.empty()) {
            Status s =
                m.job.counters[i].take(asked[i], a, answers[i].sent_us, answers[i].received_us);
            if (!s) why = s.message();
        }
        if (!why.empty()) return malformed(i, step, why);
        complete = complete && m.job.counters[i].complete();
    }
    return Status::ok();
}

Status monitor_collect(Monitor &m) {
    // Each round brings up to kMaxSamplesPerAnswer of every node's; a node that keeps saying it
    // has more than it sends is not asked forever.
    const size_t most_rounds = kMaxHeldSamples / kMaxSamplesPerAnswer + 4;
    bool complete = false;
    for (size_t round = 0; round < most_rounds && !complete; ++round)
        SORTAPP_TRY(ask_counters(m, "collecting counters", complete));
    return Status::ok();
}

}  // namespace sortapp::cluster
