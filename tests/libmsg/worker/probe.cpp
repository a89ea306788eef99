// Scenario "probe": msg_probe and msg_iprobe report the source, tag and size of the first
// unexpected message a receive would take, without receiving it, for eager and long messages,
// with and without wildcards; the receive that follows takes exactly that message.
#include <cstring>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

struct Message {
    int tag;
    size_t size;
};

std::vector<Message> messages(size_t eager, size_t buffer) {
    return {{10, 0}, {11, 100}, {12, eager}, {13, eager + 1}, {14, 3 * buffer + 5}, {15, 64}};
}

// Probes with the given source and tag must report m (the next message in order), then a
// receive sized from the probe takes it whole.
void probe_and_take(Job &job, int source, int tag, const Message &m, bool blocking) {
    msg_completion_t c{};
    if (blocking) {
        WSTATUS(msg_probe(job.ctx(), source, tag, completion_timeout_ms(), &c), MSG_OK);
    } else {
        // The message has arrived (the counters say so): one look must find it.
        int flag = -1;
        WSTATUS(msg_iprobe(job.ctx(), source, tag, &flag, &c), MSG_OK);
        WCHECK(flag == 1, "iprobe(%d, %d) found nothing for tag %d", source, tag, m.tag);
    }
    WCHECK(c.op == MSG_OP_RECV && c.status == MSG_OK && c.source == 0 && c.tag == m.tag &&
               c.bytes == m.size && c.data == m.size,
           "probe(%d, %d) expected tag %d, %zu B: %s", source, tag, m.tag, m.size,
           describe(c).c_str());
    // A second probe still sees it: probing takes nothing.
    msg_completion_t again{};
    WSTATUS(msg_probe(job.ctx(), source, tag, 0, &again), MSG_OK);
    WCHECK(again.tag == m.tag && again.bytes == m.size, "second probe: %s",
           describe(again).c_str());
    Buffer buf(c.bytes);
    msg_completion_t r{};
    WSTATUS(msg_recv(job.ctx(), c.source, c.tag, buf.get(), c.bytes, &r), MSG_OK);
    WCHECK(r.bytes == m.size, "receive after probe: %s", describe(r).c_str());
    std::string wrong = check_message(buf.get(), m.size, 0, m.tag, 0);
    WCHECK(wrong.empty(), "tag %d: %s", m.tag, wrong.c_str());
}

void receiver(Job &job, size_t eager, size_t buffer) {
    const std::vector<Message> all = messages(eager, buffer);
    // Nothing has been sent yet: a look finds nothing, a short probe times out.
    int flag = -1;
    msg_completion_t c{};
    WSTATUS(msg_iprobe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, &flag, &c), MSG_OK);
    WCHECK(flag == 0, "iprobe found a message before any was sent: %s", describe(c).c_str());
    WSTATUS(msg_probe(job.ctx(), 0, MSG_ANY_TAG, 0, &c), MSG_ERR_TIMEOUT);
    const msg_stats_t before = get_stats(job);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    // Round 1: blocking probes while messages arrive, alternating wildcards.
    for (size_t i = 0; i < all.size(); ++i) {
        const int source = i % 2 == 0 ? MSG_ANY_SOURCE : 0;
        const int tag = i % 3 == 0 ? MSG_ANY_TAG : all[i].tag;
        probe_and_take(job, source, tag, all[i], true);
    }
    // Round 2: everything has arrived first; a probe for a later tag skips earlier ones.
    wait_for_stat(job, &msg_stats_t::unexpected_messages,
                  before.unexpected_messages + 2 * all.size(), "round 2's messages arriving");
    probe_and_take(job, 0, all.back().tag, all.back(), false);
    probe_and_take(job, 0, all[4].tag, all[4], false);
    for (size_t i = 0; i + 1 < all.size(); ++i)
        if (i != 4) probe_and_take(job, MSG_ANY_SOURCE, MSG_ANY_TAG, all[i], false);
    WSTATUS(msg_iprobe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, &flag, &c), MSG_OK);
    WCHECK(flag == 0, "a message left after all were received: %s", describe(c).c_str());
}

void sender(Job &job, size_t eager, size_t buffer) {
    const std::vector<Message> all = messages(eager, buffer);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    for (int round = 0; round < 2; ++round) {
        Cq cq(job.ctx());
        std::vector<Buffer> bufs;
        bufs.reserve(all.size());
        for (const Message &m : all) {
            bufs.emplace_back(m.size);
            make_message(bufs.back().get(), m.size, 0, m.tag, 0);
            WSTATUS(msg_isend(job.ctx(), 1, m.tag, bufs.back().get(), m.size, cq.get(), nullptr),
                    MSG_OK);
        }
        for (size_t n = 0; n < all.size(); ++n) {
            msg_completion_t c = wait_completion(cq.get(), "probe sends");
            WCHECK(c.status == MSG_OK, "send: %s", describe(c).c_str());
        }
        cq.destroy();
    }
}

}  // namespace

void run_probe(const Args &) {
    Job job;
    WCHECK(job.size == 2, "the probe scenario needs 2 ranks, got %d", job.size);
    const size_t eager = job.info.eager_max, buffer = job.info.buffer_size;
    if (job.rank == 1)
        receiver(job, eager, buffer);
    else
        sender(job, eager, buffer);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
