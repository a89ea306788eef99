// Scenarios "payload" and "payload_huge": every size class crosses between two ranks intact —
// 0 B, 1 B, the eager threshold and the buffer size +-1, random sizes, 64 MiB, and 1 GiB.
#include <cinttypes>
#include <random>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

// One message each way per entry; each travels on its own tag so a mix-up is a mismatch.
// Buffers start `skew` bytes into their allocation: registration and RDMA must cope with
// addresses that are not word aligned.
struct Transfer {
    size_t size;
    bool null_buffers;  // 0 B sent from and received into NULL
    size_t spare;       // receive capacity beyond the message
    size_t skew;
    Buffer send_mem;
    Buffer recv_mem;
    int send_hits = 0;
    int recv_hits = 0;
    Transfer(size_t n, bool null, size_t extra, size_t offset)
        : size(n),
          null_buffers(null),
          spare(extra),
          skew(offset),
          send_mem(n + offset),
          recv_mem(n + extra + offset) {}
    unsigned char *send_buf() const { return send_mem.get() + skew; }
    unsigned char *recv_buf() const { return recv_mem.get() + skew; }
};

struct Cookie {
    size_t index;
    bool recv;
};

std::vector<size_t> chosen_sizes(size_t eager, size_t buffer, uint64_t seed, size_t random_count,
                                 size_t big) {
    std::vector<size_t> sizes = {0,
                                 1,
                                 2,
                                 7,
                                 8,
                                 9,
                                 63,
                                 64,
                                 65,
                                 eager - 1,
                                 eager,
                                 eager + 1,
                                 buffer - 1,
                                 buffer,
                                 buffer + 1,
                                 2 * buffer - 1,
                                 2 * buffer,
                                 2 * buffer + 1,
                                 5 * buffer + 3};
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < random_count; ++i) {
        // Half the random sizes stay near the eager range, half reach several chunks.
        size_t limit = (i % 2 == 0) ? 2 * eager : 4 * buffer;
        sizes.push_back(rng() % (limit + 1));
    }
    if (big > 0) sizes.push_back(big);
    return sizes;
}

void check_send(const msg_completion_t &c, int peer, int tag, size_t size) {
    WCHECK(c.status == MSG_OK, "send of %zu B on tag %d: %s", size, tag, describe(c).c_str());
    WCHECK(c.op == MSG_OP_SEND, "send completion has op %d: %s", c.op, describe(c).c_str());
    WCHECK(c.source == peer && c.tag == tag && c.bytes == size,
           "send completion should be (dest %d, tag %d, %zu B): %s", peer, tag, size,
           describe(c).c_str());
}

void check_recv(const msg_completion_t &c, const void *buf, int peer, int tag, size_t size) {
    WCHECK(c.status == MSG_OK, "receive of %zu B on tag %d: %s", size, tag, describe(c).c_str());
    WCHECK(c.op == MSG_OP_RECV, "receive completion has op %d: %s", c.op, describe(c).c_str());
    WCHECK(c.source == peer && c.tag == tag && c.bytes == size,
           "receive completion should be (source %d, tag %d, %zu B): %s", peer, tag, size,
           describe(c).c_str());
    std::string wrong = check_message(buf, size, peer, tag, 0);
    WCHECK(wrong.empty(), "message of %zu B on tag %d: %s", size, tag, wrong.c_str());
}

// Both ranks post every receive and every send at once, then reap all completions.
void exchange_async(Job &job, std::vector<Transfer> &transfers) {
    const int peer = 1 - job.rank;
    Cq cq(job.ctx());
    std::vector<Cookie> cookies;
    cookies.reserve(2 * transfers.size());
    for (size_t i = 0; i < transfers.size(); ++i) cookies.push_back({i, true});
    for (size_t i = 0; i < transfers.size(); ++i) cookies.push_back({i, false});

    for (size_t i = 0; i < transfers.size(); ++i) {
        Transfer &t = transfers[i];
        void *buf = t.null_buffers ? nullptr : t.recv_buf();
        size_t capacity = t.null_buffers ? 0 : t.size + t.spare;
        WSTATUS(
            msg_irecv(job.ctx(), peer, static_cast<int>(i), buf, capacity, cq.get(), &cookies[i]),
            MSG_OK);
    }
    for (size_t i = 0; i < transfers.size(); ++i) {
        Transfer &t = transfers[i];
        make_message(t.send_buf(), t.size, job.rank, static_cast<int>(i), 0);
        const void *buf = t.null_buffers ? nullptr : t.send_buf();
        WSTATUS(msg_isend(job.ctx(), peer, static_cast<int>(i), buf, t.size, cq.get(),
                          &cookies[transfers.size() + i]),
                MSG_OK);
    }
    for (size_t n = 0; n < 2 * transfers.size(); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "payload send/receive completions");
        auto *cookie = static_cast<Cookie *>(c.cookie);
        WCHECK(cookie >= cookies.data() && cookie < cookies.data() + cookies.size(),
               "completion carries a cookie that was never given: %s", describe(c).c_str());
        Transfer &t = transfers[cookie->index];
        const int tag = static_cast<int>(cookie->index);
        if (cookie->recv) {
            WCHECK(++t.recv_hits == 1, "receive on tag %d completed twice", tag);
            check_recv(c, t.recv_buf(), peer, tag, t.size);
        } else {
            WCHECK(++t.send_hits == 1, "send on tag %d completed twice", tag);
            check_send(c, peer, tag, t.size);
        }
    }
    msg_completion_t extra{};
    WSTATUS(msg_cq_wait(cq.get(), 0, &extra), MSG_ERR_TIMEOUT);
    cq.destroy();
}

// Blocking forms: rank 0 sends while rank 1 receives, then the other way round.
void exchange_blocking(Job &job, std::vector<Transfer> &transfers) {
    const int peer = 1 - job.rank;
    for (int sender = 0; sender < 2; ++sender) {
        for (size_t i = 0; i < transfers.size(); ++i) {
            Transfer &t = transfers[i];
            const int tag = 1000 + static_cast<int>(i);
            if (job.rank == sender) {
                make_message(t.send_buf(), t.size, job.rank, tag, 0);
                WSTATUS(
                    msg_send(job.ctx(), peer, tag, t.null_buffers ? nullptr : t.send_buf(), t.size),
                    MSG_OK);
            } else {
                msg_completion_t c{};
                WSTATUS(msg_recv(job.ctx(), peer, tag, t.null_buffers ? nullptr : t.recv_buf(),
                                 t.null_buffers ? 0 : t.size + t.spare, &c),
                        MSG_OK);
                c.op = MSG_OP_RECV;  // msg_recv's completion need not say what it was
                check_recv(c, t.recv_buf(), peer, tag, t.size);
            }
        }
    }
    // A NULL completion pointer is allowed for msg_recv.
    const int tag = 5000;
    char byte = 'x';
    if (job.rank == 0) {
        WSTATUS(msg_send(job.ctx(), peer, tag, &byte, 1), MSG_OK);
    } else {
        char got = 0;
        WSTATUS(msg_recv(job.ctx(), peer, tag, &got, 1, nullptr), MSG_OK);
        WCHECK(got == 'x', "one-byte blocking message arrived as %d", got);
    }
}

}  // namespace

void run_payload(const Args &args) {
    const uint64_t seed = parse_size_arg(args, 0, 1);
    const size_t random_count = scaled(parse_size_arg(args, 1, 40), 8);
    const size_t big = parse_size_arg(args, 2, 64) << 20;

    Job job;
    WCHECK(job.size == 2, "the payload scenario needs 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const size_t eager = job.info.eager_max, buffer = job.info.buffer_size;
    WCHECK(eager > 64 && buffer > eager, "eager_max %zu and buffer_size %zu leave no room to test",
           eager, buffer);
    say("payload: eager_max %zu, buffer_size %zu, seed %" PRIu64 ", %zu random sizes, big %zu B",
        eager, buffer, seed, random_count, big);

    std::vector<size_t> sizes = chosen_sizes(eager, buffer, seed, random_count, big);
    std::vector<Transfer> transfers;
    transfers.reserve(sizes.size() + 1);
    transfers.emplace_back(0, true, 0, 0);  // 0 B from and into NULL buffers
    for (size_t i = 0; i < sizes.size(); ++i)
        transfers.emplace_back(sizes[i], false, (i % 3) * 17, i % 8);

    double start = now_seconds();
    exchange_async(job, transfers);
    say("payload: %zu messages each way, async, %.3f s", transfers.size(), now_seconds() - start);

    // Blocking forms over the boundary sizes only; the random ones add nothing there.
    std::vector<Transfer> boundary;
    for (size_t n : {size_t{0}, size_t{1}, eager, eager + 1, buffer + 1, 3 * buffer})
        boundary.emplace_back(n, false, 5, n % 8);
    boundary.emplace_back(0, true, 0, 0);
    exchange_blocking(job, boundary);

    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    msg_stats_t stats{};
    WSTATUS(msg_get_stats(job.ctx(), &stats), MSG_OK);
    const uint64_t sent = transfers.size() + boundary.size() + (job.rank == 0 ? 1 : 0);
    WCHECK(stats.messages_sent >= sent && stats.messages_received >= sent - 1,
           "stats count %" PRIu64 " sent / %" PRIu64 " received, expected at least %" PRIu64,
           stats.messages_sent, stats.messages_received, sent);
    WCHECK(stats.bad_headers == 0 && stats.peers_failed == 0,
           "stats report %" PRIu64 " bad headers and %" PRIu64 " failed peers", stats.bad_headers,
           stats.peers_failed);
    job.finalize();
}

void run_payload_huge(const Args &args) {
    const size_t size = parse_size_arg(args, 0, 1024) << 20;
    Job job;
    WCHECK(job.size == 2, "the payload_huge scenario needs 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const int tag = 77;
    Buffer buf(size);
    if (job.rank == 0) {
        make_message(buf.get(), size, 0, tag, 0);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        double start = now_seconds();
        WSTATUS(msg_send(job.ctx(), 1, tag, buf.get(), size), MSG_OK);
        say("payload_huge: sent %zu B in %.3f s", size, now_seconds() - start);
    } else {
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        double start = now_seconds();
        msg_completion_t c{};
        WSTATUS(msg_recv(job.ctx(), 0, tag, buf.get(), size, &c), MSG_OK);
        double seconds = now_seconds() - start;
        WCHECK(c.source == 0 && c.tag == tag && c.bytes == size,
               "receive completion should be (source 0, tag %d, %zu B): %s", tag, size,
               describe(c).c_str());
        std::string wrong = check_message(buf.get(), size, 0, tag, 0);
        WCHECK(wrong.empty(), "%zu B message: %s", size, wrong.c_str());
        say("payload_huge: received %zu B in %.3f s (%.0f MB/s)", size, seconds,
            static_cast<double>(size) / seconds / 1e6);
    }
    job.finalize();
}

}  // namespace worker
