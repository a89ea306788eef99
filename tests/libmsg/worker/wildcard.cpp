// Scenario "wildcard": receives with MSG_ANY_SOURCE and/or MSG_ANY_TAG match eager and long
// messages, whether they were posted before or after arrival, and report the real source and tag.
#include <algorithm>
#include <set>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

// Each sender uses its own size class, so wildcards meet the eager and both long paths.
size_t sender_size(int rank, size_t eager, size_t buffer) {
    switch (rank % 3) {
        case 1:
            return 100;  // eager
        case 2:
            return 3 * buffer + 5;  // long, several chunks
        default:
            return eager + 1;  // the smallest long message
    }
}

struct Received {
    msg_completion_t completion;
    Buffer buf;
};

// What a completion and its payload say must agree: the stamp was written by the real sender.
void check_wildcard_receive(const msg_completion_t &c, const Buffer &buf, size_t eager,
                            size_t buffer, int want_tag_base) {
    WCHECK(c.status == MSG_OK && c.op == MSG_OP_RECV, "wildcard receive: %s", describe(c).c_str());
    WCHECK(c.source >= 1, "wildcard receive reports source %d: %s", c.source, describe(c).c_str());
    const int tag = want_tag_base + c.source;
    WCHECK(c.tag == tag, "wildcard receive from %d reports tag %d, sender used %d", c.source, c.tag,
           tag);
    const size_t size = sender_size(c.source, eager, buffer);
    WCHECK(c.bytes == size, "wildcard receive from %d reports %zu B, sender sent %zu B", c.source,
           c.bytes, size);
    std::string wrong = check_message(buf.get(), c.bytes, c.source, c.tag, 0);
    WCHECK(wrong.empty(), "wildcard receive (source %d, tag %d): %s", c.source, c.tag,
           wrong.c_str());
}

void expect_every_sender_once(const std::set<int> &sources, int size, const char *phase) {
    WCHECK(static_cast<int>(sources.size()) == size - 1 && *sources.begin() == 1 &&
               *sources.rbegin() == size - 1,
           "%s: received from %zu distinct senders, expected each of 1..%d once", phase,
           sources.size(), size - 1);
}

// How many of the senders (ranks 1..size-1) send a long message.
uint64_t long_senders(int size, size_t eager, size_t buffer) {
    uint64_t n = 0;
    for (int r = 1; r < size; ++r) n += sender_size(r, eager, buffer) > eager;
    return n;
}

// Rank 0's counters show each phase took the path it is named for: `unexpected` and
// `expected` arrivals, and `long_n` long messages received by the configured protocol.
void check_phase(const Job &job, const msg_stats_t &before, uint64_t unexpected, uint64_t expected,
                 uint64_t long_n, const char *phase) {
    const msg_stats_t after = get_stats(job);
    check_arrivals(before, after, unexpected, expected, phase);
    check_long_protocol(job, before, after, true, long_n, phase);
}

void send_stamped(Job &job, int dest, int tag, size_t size) {
    Buffer buf(size);
    make_message(buf.get(), size, job.rank, tag, 0);
    WSTATUS(msg_send(job.ctx(), dest, tag, buf.get(), size), MSG_OK);
}

// What every phase needs: the sizes in use, and how many senders (and of them long senders).
struct Setup {
    size_t eager, buffer, capacity;
    uint64_t senders, longs;
};

// Phase 1, unexpected messages: everyone sends before rank 0 posts (ANY_SOURCE, ANY_TAG),
// which it does once its counters show every message has arrived. The barrier keeps the
// messages out of the counts rank 0 starts from.
void unexpected_phase(Job &job, const Setup &s) {
    if (job.rank == 0) {
        const msg_stats_t before = get_stats(job);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        wait_for_stat(job, &msg_stats_t::unexpected_messages,
                      before.unexpected_messages + s.senders,
                      "phase 1: every sender's message arriving unexpected");
        std::set<int> sources;
        for (int i = 1; i < job.size; ++i) {
            Buffer buf(s.capacity);
            msg_completion_t c{};
            WSTATUS(msg_recv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, buf.get(), s.capacity, &c),
                    MSG_OK);
            c.op = MSG_OP_RECV;
            check_wildcard_receive(c, buf, s.eager, s.buffer, 100);
            WCHECK(sources.insert(c.source).second, "phase 1: two messages reported from %d",
                   c.source);
        }
        expect_every_sender_once(sources, job.size, "phase 1 (unexpected, any/any)");
        check_phase(job, before, s.senders, 0, s.longs, "phase 1 (unexpected, any/any)");
    } else {
        // Eager sends complete locally; long ones need rank 0's receive, so they go async.
        Cq cq(job.ctx());
        const size_t size = sender_size(job.rank, s.eager, s.buffer);
        Buffer buf(size);
        make_message(buf.get(), size, job.rank, 100 + job.rank, 0);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        WSTATUS(msg_isend(job.ctx(), 0, 100 + job.rank, buf.get(), size, cq.get(), nullptr),
                MSG_OK);
        msg_completion_t c = wait_completion(cq.get(), "phase 1 send");
        WCHECK(c.status == MSG_OK, "phase 1 send: %s", describe(c).c_str());
        cq.destroy();
    }
}

// Phase 2, posted receives: rank 0 posts (ANY_SOURCE, ANY_TAG) before anything is sent.
void posted_phase(Job &job, const Setup &s) {
    if (job.rank == 0) {
        const msg_stats_t before = get_stats(job);
        Cq cq(job.ctx());
        std::vector<Buffer> bufs;
        for (int i = 1; i < job.size; ++i) bufs.emplace_back(s.capacity);
        for (auto &b : bufs)
            WSTATUS(msg_irecv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, b.get(), s.capacity, cq.get(),
                              &b),
                    MSG_OK);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        std::set<int> sources;
        for (int i = 1; i < job.size; ++i) {
            msg_completion_t c = wait_completion(cq.get(), "phase 2 wildcard receive");
            check_wildcard_receive(c, *static_cast<Buffer *>(c.cookie), s.eager, s.buffer, 200);
            WCHECK(sources.insert(c.source).second, "phase 2: two messages reported from %d",
                   c.source);
        }
        expect_every_sender_once(sources, job.size, "phase 2 (posted, any/any)");
        check_phase(job, before, 0, s.senders, s.longs, "phase 2 (posted, any/any)");
        cq.destroy();
    } else {
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        send_stamped(job, 0, 200 + job.rank, sender_size(job.rank, s.eager, s.buffer));
    }
}

// Phase 3, one wildcard at a time: (ANY_SOURCE, tag 9) must take only tag-9 messages even
// though each sender's tag-7 message was sent first; (source, ANY_TAG) then finds tag 7.
void one_wildcard_phase(Job &job, const Setup &s) {
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    if (job.rank == 0) {
        const msg_stats_t before = get_stats(job);
        Cq cq(job.ctx());
        std::vector<Buffer> bufs;
        for (int i = 1; i < job.size; ++i) bufs.emplace_back(s.capacity);
        for (auto &b : bufs)
            WSTATUS(msg_irecv(job.ctx(), MSG_ANY_SOURCE, 9, b.get(), s.capacity, cq.get(), &b),
                    MSG_OK);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        std::set<int> sources;
        for (int i = 1; i < job.size; ++i) {
            msg_completion_t c = wait_completion(cq.get(), "phase 3 (ANY_SOURCE, 9) receive");
            check_wildcard_receive(c, *static_cast<Buffer *>(c.cookie), s.eager, s.buffer,
                                   9 - c.source);
            sources.insert(c.source);
        }
        expect_every_sender_once(sources, job.size, "phase 3 (any source, tag 9)");
        for (int src = 1; src < job.size; ++src) {
            Buffer buf(s.capacity);
            msg_completion_t c{};
            WSTATUS(msg_recv(job.ctx(), src, MSG_ANY_TAG, buf.get(), s.capacity, &c), MSG_OK);
            c.op = MSG_OP_RECV;
            WCHECK(c.source == src, "(source %d, ANY_TAG) receive reports source %d", src,
                   c.source);
            check_wildcard_receive(c, buf, s.eager, s.buffer, 7 - c.source);
        }
        // Tag 7 found no posted receive, tag 9 found one waiting.
        check_phase(job, before, s.senders, s.senders, 2 * s.longs, "phase 3 (any source, tag 9)");
        cq.destroy();
    } else {
        Cq cq(job.ctx());
        const size_t size = sender_size(job.rank, s.eager, s.buffer);
        Buffer seven(size), nine(size);
        make_message(seven.get(), size, job.rank, 7, 0);
        make_message(nine.get(), size, job.rank, 9, 0);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        WSTATUS(msg_isend(job.ctx(), 0, 7, seven.get(), size, cq.get(), nullptr), MSG_OK);
        WSTATUS(msg_isend(job.ctx(), 0, 9, nine.get(), size, cq.get(), nullptr), MSG_OK);
        for (int i = 0; i < 2; ++i) {
            msg_completion_t c = wait_completion(cq.get(), "phase 3 send");
            WCHECK(c.status == MSG_OK, "phase 3 send: %s", describe(c).c_str());
        }
        cq.destroy();
    }
}

// Phase 4, specific and wildcard receives side by side: a message goes to the earliest
// posted receive that matches it, so (1, 300) gets rank 1's and (ANY, ANY) the other one.
void side_by_side_phase(Job &job, const Setup &s) {
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    if (job.rank == 0) {
        const msg_stats_t before = get_stats(job);
        Cq cq(job.ctx());
        Buffer specific(s.capacity), any(s.capacity);
        WSTATUS(msg_irecv(job.ctx(), 1, 300, specific.get(), s.capacity, cq.get(), &specific),
                MSG_OK);
        WSTATUS(msg_irecv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, any.get(), s.capacity, cq.get(),
                          &any),
                MSG_OK);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        for (int i = 0; i < 2; ++i) {
            msg_completion_t c = wait_completion(cq.get(), "phase 4 receive");
            if (c.cookie == &specific) {
                WCHECK(c.source == 1 && c.tag == 300, "(1, 300) receive got %s",
                       describe(c).c_str());
                check_wildcard_receive(c, specific, s.eager, s.buffer, 299);
            } else {
                WCHECK(c.cookie == &any, "phase 4 completion with a foreign cookie: %s",
                       describe(c).c_str());
                WCHECK(c.source == 2 && c.tag == 302,
                       "(ANY, ANY) receive got %s, expected (2, 302)", describe(c).c_str());
                check_wildcard_receive(c, any, s.eager, s.buffer, 300);
            }
        }
        check_phase(job, before, 0, 2,
                    (sender_size(1, s.eager, s.buffer) > s.eager) +
                        (sender_size(2, s.eager, s.buffer) > s.eager),
                    "phase 4 (specific and wildcard, posted)");
        cq.destroy();
    } else {
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        if (job.rank <= 2)
            send_stamped(job, 0, 300 + (job.rank == 2 ? 2 : 0),
                         sender_size(job.rank, s.eager, s.buffer));
    }
}

}  // namespace

void run_wildcard(const Args &) {
    Job job;
    WCHECK(job.size >= 3, "the wildcard scenario needs at least 3 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const size_t eager = job.info.eager_max, buffer = job.info.buffer_size;
    const Setup s{eager, buffer, 4 * buffer, static_cast<uint64_t>(job.size - 1),
                  long_senders(job.size, eager, buffer)};
    unexpected_phase(job, s);
    posted_phase(job, s);
    one_wildcard_phase(job, s);
    side_by_side_phase(job, s);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
