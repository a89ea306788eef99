// Scenario "threads": several threads per process send, receive and wait at the same time; all
// of them wait on one shared CQ and each completion reaches exactly one of them. Odd threads also
// make blocking send/receive exchanges, and the last completion is announced to every thread by
// entries posted with msg_cq_post.
#include <atomic>
#include <thread>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

constexpr uint64_t kStopMarker = 0x53544f50;  // "STOP"
constexpr int kBlockingTagBase = 1000;

struct Op {
    bool recv = false;
    int thread = 0;
    int peer = 0;
    uint64_t seq = 0;
    size_t size = 0;
    std::unique_ptr<Buffer> buf;
    std::atomic<int> hits{0};
};

class ThreadsScenario {
  public:
    ThreadsScenario(Job &job, int threads, size_t rounds)
        : job_(job),
          threads_(threads),
          rounds_(rounds),
          cq_(job.ctx()),
          peers_(static_cast<size_t>(job.size - 1)),
          ops_(static_cast<size_t>(threads) * rounds * peers_ * 2) {
        capacity_ = 4 * job.info.buffer_size;
        remaining_ = ops_.size();
    }

    void run() {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads_; ++t) pool.emplace_back([this, t] { thread_main(t); });
        for (auto &th : pool) th.join();
        WCHECK(stops_seen_ == threads_, "%d stop entries were delivered for %d threads",
               stops_seen_.load(), threads_);
        for (const Op &op : ops_)
            WCHECK(op.hits == 1, "%s thread %d seq %llu peer %d completed %d times",
                   op.recv ? "receive" : "send", op.thread, static_cast<unsigned long long>(op.seq),
                   op.peer, op.hits.load());
        msg_completion_t extra{};
        WSTATUS(msg_cq_wait(cq_.get(), 0, &extra), MSG_ERR_TIMEOUT);
        cq_.destroy();
    }

  private:
    int peer_of(size_t index) const {
        int p = static_cast<int>(index);
        return p >= job_.rank ? p + 1 : p;
    }
    Op &op(int thread, size_t round, size_t peer, bool recv) {
        size_t i = ((static_cast<size_t>(thread) * rounds_ + round) * peers_ + peer) * 2 + recv;
        return ops_[i];
    }

    void thread_main(int t) {
        for (size_t k = 0; k < rounds_; ++k) {
            for (size_t p = 0; p < peers_; ++p) post_pair(t, k, p);
            if (t % 2 == 1) blocking_exchange(t, k);
            // Wait in the middle of posting too: completions of other threads' work come here.
            msg_completion_t c{};
            int rc = msg_cq_wait(cq_.get(), 0, &c);
            WCHECK(rc == MSG_OK || rc == MSG_ERR_TIMEOUT, "thread %d: msg_cq_wait: %d (%s)", t, rc,
                   msg_strerror(rc));
            if (rc == MSG_OK && handle(c)) {
                // A stop entry this early means the count is wrong; handle() has failed already.
                return;
            }
        }
        // Then every thread waits on the shared CQ until its stop entry arrives.
        double last_progress = now_seconds();
        for (;;) {
            msg_completion_t c{};
            int rc = msg_cq_wait(cq_.get(), 500, &c);
            if (rc == MSG_ERR_TIMEOUT) {
                WCHECK(now_seconds() - last_progress < completion_timeout_ms() / 1000.0,
                       "thread %d: no completion for %d ms, %zu of %zu operations outstanding", t,
                       completion_timeout_ms(), remaining_.load(), ops_.size());
                continue;
            }
            WCHECK(rc == MSG_OK, "thread %d: msg_cq_wait: %d (%s)", t, rc, msg_strerror(rc));
            last_progress = now_seconds();
            if (handle(c)) return;
        }
    }

    void post_pair(int t, size_t k, size_t p) {
        const int peer = peer_of(p);
        Op &r = op(t, k, p, true);
        r.recv = true, r.thread = t, r.peer = peer, r.seq = k, r.size = capacity_;
        r.buf = std::make_unique<Buffer>(capacity_);
        WSTATUS(msg_irecv(job_.ctx(), peer, t, r.buf->get(), capacity_, cq_.get(), &r), MSG_OK);
        Op &s = op(t, k, p, false);
        s.recv = false, s.thread = t, s.peer = peer, s.seq = k;
        s.size = mixed_size(payload_key(job_.rank, t * 100 + peer, k), job_.info.eager_max,
                            job_.info.buffer_size);
        s.buf = std::make_unique<Buffer>(s.size);
        make_message(s.buf->get(), s.size, job_.rank, t, k);
        WSTATUS(msg_isend(job_.ctx(), peer, t, s.buf->get(), s.size, cq_.get(), &s), MSG_OK);
    }

    // Blocking forms, peers in increasing order, lower rank sending first: every pair of ranks
    // meets in the same order on both sides, so the exchange cannot deadlock.
    void blocking_exchange(int t, size_t k) {
        const int tag = kBlockingTagBase + t;
        for (int peer = 0; peer < job_.size; ++peer) {
            if (peer == job_.rank) continue;
            const size_t out_size = mixed_size(payload_key(job_.rank, tag * 100 + peer, k),
                                               job_.info.eager_max, job_.info.buffer_size);
            const size_t in_size = mixed_size(payload_key(peer, tag * 100 + job_.rank, k),
                                              job_.info.eager_max, job_.info.buffer_size);
            Buffer out(out_size), in(capacity_);
            make_message(out.get(), out_size, job_.rank, tag, k);
            for (int turn = 0; turn < 2; ++turn) {
                if ((turn == 0) == (job_.rank < peer)) {
                    WSTATUS(msg_send(job_.ctx(), peer, tag, out.get(), out_size), MSG_OK);
                } else {
                    msg_completion_t c{};
                    WSTATUS(msg_recv(job_.ctx(), peer, tag, in.get(), capacity_, &c), MSG_OK);
                    WCHECK(c.source == peer && c.tag == tag && c.bytes == in_size,
                           "thread %d blocking receive #%zu from %d: %s", t, k, peer,
                           describe(c).c_str());
                    std::string wrong = check_message(in.get(), in_size, peer, tag, k);
                    WCHECK(wrong.empty(), "thread %d blocking receive #%zu from %d: %s", t, k, peer,
                           wrong.c_str());
                }
            }
        }
    }

    // Returns true for this thread's stop entry.
    bool handle(const msg_completion_t &c) {
        if (c.op == MSG_OP_USER) {
            WCHECK(c.data == kStopMarker && c.cookie == this && c.status == MSG_OK,
                   "posted entry came back altered: %s", describe(c).c_str());
            WCHECK(remaining_ == 0, "stop entry delivered with %zu operations outstanding",
                   remaining_.load());
            ++stops_seen_;
            return true;
        }
        auto *o = static_cast<Op *>(c.cookie);
        WCHECK(o >= ops_.data() && o < ops_.data() + ops_.size(),
               "completion with a cookie never given: %s", describe(c).c_str());
        WCHECK(o->hits.fetch_add(1) == 0, "%s thread %d seq %llu peer %d delivered twice: %s",
               o->recv ? "receive" : "send", o->thread, static_cast<unsigned long long>(o->seq),
               o->peer, describe(c).c_str());
        WCHECK(c.status == MSG_OK && c.source == o->peer && c.tag == o->thread,
               "%s thread %d seq %llu peer %d: %s", o->recv ? "receive" : "send", o->thread,
               static_cast<unsigned long long>(o->seq), o->peer, describe(c).c_str());
        if (o->recv) {
            // Thread t posted its receives from one peer in round order: FIFO matches seq k to
            // receive k.
            const size_t size =
                mixed_size(payload_key(o->peer, o->thread * 100 + job_.rank, o->seq),
                           job_.info.eager_max, job_.info.buffer_size);
            WCHECK(c.bytes == size, "receive thread %d seq %llu from %d: %zu B, expected %zu",
                   o->thread, static_cast<unsigned long long>(o->seq), o->peer, c.bytes, size);
            std::string wrong = check_message(o->buf->get(), size, o->peer, o->thread, o->seq);
            WCHECK(wrong.empty(), "receive thread %d seq %llu from %d: %s", o->thread,
                   static_cast<unsigned long long>(o->seq), o->peer, wrong.c_str());
        } else {
            WCHECK(c.bytes == o->size, "send thread %d seq %llu: %s", o->thread,
                   static_cast<unsigned long long>(o->seq), describe(c).c_str());
        }
        if (remaining_.fetch_sub(1) == 1) {
            // The last completion: wake every thread, whichever it is waiting in.
            for (int i = 0; i < threads_; ++i) {
                msg_completion_t stop{};
                stop.op = MSG_OP_USER;
                stop.status = MSG_OK;
                stop.cookie = this;
                stop.data = kStopMarker;
                WSTATUS(msg_cq_post(cq_.get(), &stop), MSG_OK);
            }
        }
        return false;
    }

    Job &job_;
    const int threads_;
    const size_t rounds_;
    Cq cq_;
    const size_t peers_;
    std::vector<Op> ops_;
    size_t capacity_ = 0;
    std::atomic<size_t> remaining_{0};
    std::atomic<int> stops_seen_{0};
};

}  // namespace

void run_threads(const Args &args) {
    const int threads = static_cast<int>(parse_size_arg(args, 0, 8));
    const size_t rounds = scaled(parse_size_arg(args, 1, 16), 4);
    Job job;
    WCHECK(job.size >= 2, "the threads scenario needs at least 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    {
        ThreadsScenario scenario(job, threads, rounds);
        scenario.run();
    }
    say("threads: %d threads x %zu rounds x %d peers, every completion delivered once", threads,
        rounds, job.size - 1);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
