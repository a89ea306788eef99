// Scenario "truncation": a message larger than the receive buffer completes the receive with
// MSG_ERR_TRUNCATED, writes nothing past the buffer, and leaves the stream usable afterwards.
#include <algorithm>
#include <cstring>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

constexpr size_t kGuard = 256;
constexpr unsigned char kGuardByte = 0xA5;

struct Case {
    const char *name;
    size_t size;
    size_t capacity;
};

std::vector<Case> cases(size_t eager, size_t buffer) {
    return {
        {"eager into half", eager / 2, eager / 4},
        {"eager one byte short", 100, 99},
        {"1 B into 0 B", 1, 0},
        {"eager max + 1 into eager max", eager + 1, eager},
        {"long into one buffer", 3 * buffer + 7, buffer},
        {"long one byte short", 2 * buffer, 2 * buffer - 1},
        // Exact fits must not be reported as truncated.
        {"eager exact", eager, eager},
        {"long exact", 2 * buffer, 2 * buffer},
        {"0 B into 0 B", 0, 0},
    };
}

// The follow-up on each tag shows the truncated message was consumed whole: no chunk of it
// may leak into the next receive.
size_t follow_up_size(size_t i, size_t eager, size_t buffer) {
    return i % 2 == 0 ? 64 : eager + buffer;
}

struct Slot {
    Buffer buf;
    Buffer next;
    explicit Slot(size_t capacity, size_t follow) : buf(capacity + kGuard), next(follow) {}
};

// How many of a round's messages (each case and its follow-up) are long.
uint64_t long_messages(size_t eager, size_t buffer) {
    const std::vector<Case> all = cases(eager, buffer);
    uint64_t n = 0;
    for (size_t i = 0; i < all.size(); ++i)
        n += (all[i].size > eager) + (follow_up_size(i, eager, buffer) > eager);
    return n;
}

// Rank 1 receives: phase 0 posts before rank 0 sends (the posted path), phase 1 only once its
// counters show every message has arrived (the unexpected path); the counters then confirm it.
void receive_round(Job &job, int phase, size_t eager, size_t buffer) {
    const std::vector<Case> all = cases(eager, buffer);
    const uint64_t messages = 2 * all.size();
    const msg_stats_t before = get_stats(job);
    Cq cq(job.ctx());
    std::vector<Slot> slots;
    slots.reserve(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
        slots.emplace_back(all[i].capacity, follow_up_size(i, eager, buffer));
        std::memset(slots.back().buf.get(), kGuardByte, all[i].capacity + kGuard);
    }
    auto post = [&] {
        for (size_t i = 0; i < all.size(); ++i) {
            const int tag = phase * 100 + static_cast<int>(i);
            WSTATUS(msg_irecv(job.ctx(), 0, tag, slots[i].buf.get(), all[i].capacity, cq.get(),
                              &slots[i]),
                    MSG_OK);
            WSTATUS(msg_irecv(job.ctx(), 0, tag, slots[i].next.get(), slots[i].next.size, cq.get(),
                              &slots[i].next),
                    MSG_OK);
        }
    };
    if (phase == 0) post();
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    if (phase == 1) {
        wait_for_stat(job, &msg_stats_t::unexpected_messages, before.unexpected_messages + messages,
                      "phase 1: every message arriving before its receive is posted");
        post();
    }
    for (size_t n = 0; n < 2 * all.size(); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "truncation receives");
        for (size_t i = 0; i < all.size(); ++i) {
            const int tag = phase * 100 + static_cast<int>(i);
            const Case &k = all[i];
            if (c.cookie == &slots[i]) {
                const bool too_small = k.size > k.capacity;
                WCHECK(c.status == (too_small ? MSG_ERR_TRUNCATED : MSG_OK),
                       "phase %d, %s (%zu B into %zu B): %s", phase, k.name, k.size, k.capacity,
                       describe(c).c_str());
                WCHECK(c.source == 0 && c.tag == tag, "phase %d, %s: %s", phase, k.name,
                       describe(c).c_str());
                // bytes: what landed; data: what the sender sent (eager and long alike).
                WCHECK(c.bytes == std::min(k.size, k.capacity) && c.data == k.size,
                       "phase %d, %s: reports %zu B delivered and a %llu B message", phase, k.name,
                       c.bytes, static_cast<unsigned long long>(c.data));
                const unsigned char *guard = slots[i].buf.get() + k.capacity;
                for (size_t g = 0; g < kGuard; ++g)
                    WCHECK(guard[g] == kGuardByte,
                           "phase %d, %s: byte %zu past the %zu B buffer was overwritten", phase,
                           k.name, g, k.capacity);
                if (!too_small) {
                    WCHECK(c.bytes == k.size, "phase %d, %s: %s", phase, k.name,
                           describe(c).c_str());
                    std::string wrong = check_message(slots[i].buf.get(), k.size, 0, tag, 0);
                    WCHECK(wrong.empty(), "phase %d, %s: %s", phase, k.name, wrong.c_str());
                }
            } else if (c.cookie == &slots[i].next) {
                const size_t size = follow_up_size(i, eager, buffer);
                WCHECK(c.status == MSG_OK && c.bytes == size && c.tag == tag,
                       "phase %d, message after '%s': %s", phase, k.name, describe(c).c_str());
                std::string wrong = check_message(slots[i].next.get(), size, 0, tag, 1);
                WCHECK(wrong.empty(), "phase %d, message after '%s': %s", phase, k.name,
                       wrong.c_str());
            }
        }
    }
    const msg_stats_t after = get_stats(job);
    const char *path = phase == 0 ? "phase 0 (posted)" : "phase 1 (unexpected)";
    check_arrivals(before, after, phase == 0 ? 0 : messages, phase == 0 ? messages : 0, path);
    check_long_protocol(job, before, after, true, long_messages(eager, buffer), path);
    cq.destroy();
}

// Rank 0 sends each case and its follow-up. A send whose receiver truncated may report either
// success or MSG_ERR_TRUNCATED, but it must complete.
void send_round(Job &job, int phase, size_t eager, size_t buffer) {
    const std::vector<Case> all = cases(eager, buffer);
    const msg_stats_t before = get_stats(job);
    Cq cq(job.ctx());
    std::vector<Buffer> bufs;
    bufs.reserve(2 * all.size());
    // Phase 0: the receives are posted. Phase 1: the receiver has taken the counts it starts
    // from, so every message of the round shows in them.
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    for (size_t i = 0; i < all.size(); ++i) {
        const int tag = phase * 100 + static_cast<int>(i);
        bufs.emplace_back(all[i].size);
        make_message(bufs.back().get(), all[i].size, 0, tag, 0);
        WSTATUS(msg_isend(job.ctx(), 1, tag, bufs.back().get(), all[i].size, cq.get(), nullptr),
                MSG_OK);
        const size_t follow = follow_up_size(i, eager, buffer);
        bufs.emplace_back(follow);
        make_message(bufs.back().get(), follow, 0, tag, 1);
        WSTATUS(msg_isend(job.ctx(), 1, tag, bufs.back().get(), follow, cq.get(), nullptr), MSG_OK);
    }
    for (size_t n = 0; n < bufs.size(); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "truncation sends");
        WCHECK(c.status == MSG_OK || c.status == MSG_ERR_TRUNCATED, "phase %d send: %s", phase,
               describe(c).c_str());
    }
    check_long_protocol(job, before, get_stats(job), false, long_messages(eager, buffer),
                        phase == 0 ? "phase 0 sends" : "phase 1 sends");
    cq.destroy();
}

}  // namespace

void run_truncation(const Args &) {
    Job job;
    WCHECK(job.size == 2, "the truncation scenario needs 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const size_t eager = job.info.eager_max, buffer = job.info.buffer_size;
    for (int phase = 0; phase < 2; ++phase) {
        if (job.rank == 1)
            receive_round(job, phase, eager, buffer);
        else
            send_round(job, phase, eager, buffer);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    }
    // Blocking receive of a too-long message returns the status directly.
    if (job.rank == 0) {
        Buffer buf(eager + 1);
        make_message(buf.get(), eager + 1, 0, 500, 0);
        int rc = msg_send(job.ctx(), 1, 500, buf.get(), eager + 1);
        WCHECK(rc == MSG_OK || rc == MSG_ERR_TRUNCATED, "blocking send: %d (%s)", rc,
               msg_strerror(rc));
    } else {
        Buffer buf(eager);
        msg_completion_t c{};
        WSTATUS(msg_recv(job.ctx(), 0, 500, buf.get(), 16, &c), MSG_ERR_TRUNCATED);
        WCHECK(c.bytes == 16 && c.data == eager + 1, "blocking receive: %s", describe(c).c_str());
    }
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
