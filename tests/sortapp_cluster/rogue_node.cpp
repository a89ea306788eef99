// A sort node that answers phase 3a, or the counters question, wrongly, for the test of the
// monitor's refusal.
// usage: rogue_node samples-outside | samples-garbage | counts-outside | counters-outside
// Started by msgrun as one rank of a `sortapp job` (the job's last rank is the monitor): it
// answers the check and phases 1 and 2 as a node holding 1000 records would, then answers the
// phase 3a question its argument names with a reply the monitor must refuse; counters-outside
// answers the counters question at the check with a sample whose phase is outside its table.
// It leaves when the monitor aborts the job, or, through the watch every node keeps, when the
// monitor dies.
#include <msg/msg.h>
#include <rio/rio.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "liveness.hpp"
#include "messages.hpp"
#include "viaduct/counters.hpp"

namespace cl = sortapp::cluster;

namespace {

std::string g_mode;
int g_rank = 0;

// 1000 records with ascending keys.
class Records final : public cl::SortedSource {
  public:
    uint64_t size() const override { return 1000; }
    std::string key(uint64_t pos) const override {
        char k[16];
        std::snprintf(k, sizeof k, "%010llu", static_cast<unsigned long long>(pos * 7919));
        return std::string(k, 10);
    }
};

template <typename T>
void reply(rio_t *rio, rio_incoming_t *in, const T &value) {
    std::vector<char> bytes = cl::encode(value);
    rio_reply(rio, in, RIO_OK, bytes.data(), bytes.size());
}

void on_samples(rio_t *rio, rio_incoming_t *in, void *) {
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    cl::SampleRequest q;
    cl::decode(info.data, info.len, q);
    cl::SampleReply r = cl::answer_samples(Records(), static_cast<uint32_t>(g_rank), q);
    if (g_mode == "samples-garbage") {
        const char junk[] = "not a sample reply";
        rio_reply(rio, in, RIO_OK, junk, sizeof junk);
        return;
    }
    // A well-formed message with a sample past the end of this node's records.
    if (g_mode == "samples-outside" && !r.per_split.empty())
        r.per_split[0].push_back({"zzzzzzzzzz", static_cast<uint32_t>(g_rank), 5000});
    reply(rio, in, r);
}

void on_counts(rio_t *rio, rio_incoming_t *in, void *) {
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    cl::CountRequest q;
    cl::decode(info.data, info.len, q);
    cl::CountReply r = cl::answer_counts(Records(), static_cast<uint32_t>(g_rank), q);
    // More records below a pivot than this node holds; or, with no pivot to count, an
    // answer for a split that does not exist.
    bool spoiled = false;
    for (auto &c : r.counts)
        if (!c.empty() && !spoiled) c[0] = 5000, spoiled = true;
    if (!spoiled) r.counts.emplace_back();
    reply(rio, in, r);
}

// The liveness and counters questions: no samples, but one whose phase is outside the table
// in counters-outside.
void on_counters(rio_t *rio, rio_incoming_t *in, void *) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    cl::CountersAnswer a;
    a.progress.phase = "rogue";
    a.clock_us =
        static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
    a.phase_names = {"rogue"};
    if (g_mode == "counters-outside") {
        viaduct::CounterSample s;
        s.time_us = static_cast<int64_t>(a.clock_us);
        s.phase = 5;
        a.samples.assign(reinterpret_cast<const char *>(&s), cl::kSampleBytes);
        a.end = 1;
    }
    reply(rio, in, a);
}

void on_abort(rio_t *rio, rio_incoming_t *in, void *) {
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    std::string why(static_cast<const char *>(info.data), info.len);
    rio_reply(rio, in, RIO_OK, nullptr, 0);
    std::fprintf(stderr, "rogue node: the job was aborted (%s)\n", why.c_str());
    std::fflush(stderr);
    _exit(1);
}

// The sorting thread's part: the check and phases 1 and 2, as a node of 1000 records.
void answer_order(rio_t *rio, rio_incoming_t *in, const rio_request_info_t &info) {
    if (info.command == cl::kCmdCheck) {
        cl::NodeCheck c;
        c.records = 1000;
        c.disk = "rogue";
        reply(rio, in, c);
    } else if (info.command == cl::kCmdLocal) {
        cl::LocalDone d;
        d.records = 1000;
        d.handle = 1;
        reply(rio, in, d);
    } else {
        const std::string no = "rogue node: no answer to command " + std::to_string(info.command);
        rio_reply(rio, in, cl::kNodeError, no.data(), no.size());
    }
}

}  // namespace

int main(int argc, char **argv) {
    g_mode = argc > 1 ? argv[1] : "";
    if (g_mode != "samples-outside" && g_mode != "samples-garbage" && g_mode != "counts-outside" &&
        g_mode != "counters-outside") {
        std::fprintf(stderr,
                     "usage: rogue_node "
                     "samples-outside|samples-garbage|counts-outside|counters-outside\n");
        return 2;
    }
    msg_context_t *msg = nullptr;
    msg_cq_t *cq = nullptr;
    rio_t *rio = nullptr;
    int size = 0;
    if (msg_init(nullptr, &msg) != MSG_OK || msg_cq_create(msg, &cq) != MSG_OK ||
        rio_init(msg, cq, nullptr, &rio) != RIO_OK) {
        std::fprintf(stderr, "rogue node: cannot join the job\n");
        return 1;
    }
    msg_rank(msg, &g_rank);
    msg_size(msg, &size);
    rio_set_handler(rio, cl::kCmdSamples, on_samples, nullptr);
    rio_set_handler(rio, cl::kCmdCounts, on_counts, nullptr);
    rio_set_handler(rio, cl::kCmdAbort, on_abort, nullptr);
    rio_set_handler(rio, cl::kCmdProgress, on_counters, nullptr);
    rio_set_handler(rio, cl::kCmdCounters, on_counters, nullptr);
    rio_set_handler(rio, cl::kCmdPing, cl::answer_ping, nullptr);
    cl::set_whereabouts("rogue node " + std::to_string(g_rank), "");
    cl::Watch monitor_watch(rio, msg, size - 1, 10000, "the monitor");
    for (;;) {
        msg_completion_t c;
        if (msg_cq_wait(cq, -1, &c) != MSG_OK) return 1;
        if (c.op != RIO_OP_REQUEST) continue;
        auto *in = static_cast<rio_incoming_t *>(c.cookie);
        rio_request_info_t info;
        rio_incoming_info(in, &info);
        answer_order(rio, in, info);
    }
}
