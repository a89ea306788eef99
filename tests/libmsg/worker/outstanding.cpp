// Scenario "outstanding": every rank keeps hundreds of isends and irecvs in flight to all its
// peers at once, spread over several CQs; each completes exactly once, intact, in per-peer
// order, on the CQ it was bound to.
#include <memory>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

constexpr int kTag = 42;
constexpr size_t kCqs = 3;

struct Op {
    bool recv;
    int peer;
    uint64_t seq;
    size_t size;  // send: message size; receive: capacity
    size_t cq;    // index of the CQ the operation was bound to
    Buffer buf;
    int hits = 0;
    Op(bool r, int p, uint64_t s, size_t n, size_t q)
        : recv(r), peer(p), seq(s), size(n), cq(q), buf(n) {}
};

// Mostly eager, with a long message every few so long and eager traffic interleave.
size_t op_size(int source, int dest, uint64_t seq, const msg_info_t &info) {
    uint64_t key = payload_key(source, dest, seq);
    if (seq % 5 == 3) return info.eager_max + 1 + splitmix64(key) % (2 * info.buffer_size);
    return kStampBytes + splitmix64(key) % (info.eager_max - kStampBytes + 1);
}

void check_completion(const Job &job, std::vector<Op> &ops, const msg_completion_t &c, size_t q) {
    auto *op = static_cast<Op *>(c.cookie);
    WCHECK(op >= ops.data() && op < ops.data() + ops.size(),
           "completion with a cookie never given: %s", describe(c).c_str());
    WCHECK(op->cq == q, "%s #%llu with peer %d was bound to CQ %zu but completed on CQ %zu",
           op->recv ? "receive" : "send", static_cast<unsigned long long>(op->seq), op->peer,
           op->cq, q);
    WCHECK(++op->hits == 1, "%s #%llu with peer %d completed twice", op->recv ? "receive" : "send",
           static_cast<unsigned long long>(op->seq), op->peer);
    WCHECK(c.status == MSG_OK && c.source == op->peer && c.tag == kTag, "%s #%llu with peer %d: %s",
           op->recv ? "receive" : "send", static_cast<unsigned long long>(op->seq), op->peer,
           describe(c).c_str());
    if (op->recv) {
        WCHECK(c.op == MSG_OP_RECV, "receive completion has op %d", c.op);
        // Receives from one peer were posted in sequence order: FIFO gives message seq to
        // receive seq.
        const size_t size = op_size(op->peer, job.rank, op->seq, job.info);
        WCHECK(c.bytes == size, "receive #%llu from %d: %zu B, sender sent %zu B",
               static_cast<unsigned long long>(op->seq), op->peer, c.bytes, size);
        std::string wrong = check_message(op->buf.get(), c.bytes, op->peer, kTag, op->seq);
        WCHECK(wrong.empty(), "receive #%llu from %d: %s", static_cast<unsigned long long>(op->seq),
               op->peer, wrong.c_str());
    } else {
        WCHECK(c.op == MSG_OP_SEND && c.bytes == op->size, "send #%llu to %d of %zu B: %s",
               static_cast<unsigned long long>(op->seq), op->peer, op->size, describe(c).c_str());
    }
}

// The receive buffers are what msg_receive_memory says a job of this size takes, and where
// more peers send than the pool serves at once, it granted credit to those that sent.
void check_receive_memory(const Job &job) {
    size_t bytes = 0, buffers = 0;
    WSTATUS(msg_receive_memory(nullptr, job.size, &bytes, &buffers), MSG_OK);
    WCHECK(job.info.receive_buffers == buffers && job.info.receive_bytes == bytes,
           "msg_get_info: %zu receive buffers (%zu B), msg_receive_memory: %zu (%zu B)",
           job.info.receive_buffers, job.info.receive_bytes, buffers, bytes);
    if (job.size - 1 > job.info.active_peers) {
        const msg_stats_t stats = get_stats(job);
        WCHECK(stats.receive_grants > 0, "%d peers, a pool for %d: no credit granted", job.size - 1,
               job.info.active_peers);
        say("receive pool: %llu grants, %llu reclaims",
            static_cast<unsigned long long>(stats.receive_grants),
            static_cast<unsigned long long>(stats.receive_reclaims));
    }
}

}  // namespace

void run_outstanding(const Args &args) {
    const size_t per_peer = scaled(parse_size_arg(args, 0, 24), 8);
    Job job;
    WCHECK(job.size >= 2, "the outstanding scenario needs at least 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const size_t capacity = job.info.eager_max + 2 * job.info.buffer_size + 1;
    std::vector<std::unique_ptr<Cq>> cqs;
    for (size_t q = 0; q < kCqs; ++q) cqs.push_back(std::make_unique<Cq>(job.ctx()));
    std::vector<size_t> bound(kCqs, 0);

    std::vector<Op> ops;
    ops.reserve(2 * per_peer * static_cast<size_t>(job.size - 1));
    // Interleave peers, directions and CQs so nothing is posted in a convenient order.
    for (uint64_t seq = 0; seq < per_peer; ++seq) {
        for (int step = 1; step < job.size; ++step) {
            const int to = (job.rank + step) % job.size;
            const int from = (job.rank - step + job.size) % job.size;
            size_t q = ops.size() % kCqs;
            ops.emplace_back(true, from, seq, capacity, q);
            ++bound[q];
            WSTATUS(msg_irecv(job.ctx(), from, kTag, ops.back().buf.get(), capacity, cqs[q]->get(),
                              &ops.back()),
                    MSG_OK);
            const size_t size = op_size(job.rank, to, seq, job.info);
            q = ops.size() % kCqs;
            ops.emplace_back(false, to, seq, size, q);
            ++bound[q];
            make_message(ops.back().buf.get(), size, job.rank, kTag, seq);
            WSTATUS(msg_isend(job.ctx(), to, kTag, ops.back().buf.get(), size, cqs[q]->get(),
                              &ops.back()),
                    MSG_OK);
        }
    }
    say("outstanding: %zu operations posted before the first wait", ops.size());

    // Drain one CQ after another: the others' operations must progress meanwhile.
    for (size_t q = 0; q < kCqs; ++q) {
        for (size_t n = 0; n < bound[q]; ++n) {
            msg_completion_t c = wait_completion(cqs[q]->get(), "outstanding operations");
            check_completion(job, ops, c, q);
        }
    }
    for (auto &cq : cqs) {
        msg_completion_t extra{};
        WSTATUS(msg_cq_wait(cq->get(), 0, &extra), MSG_ERR_TIMEOUT);
        cq->destroy();
    }
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    check_receive_memory(job);
    job.finalize();
}

}  // namespace worker
