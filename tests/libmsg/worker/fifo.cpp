// Scenario "fifo": between one pair of peers on one tag, messages are matched in the order they
// were sent, even when eager messages chase long ones that are still moving.
#include <map>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

constexpr int kTagsPerPhase = 2;

size_t message_size(int source, int tag, uint64_t seq, const msg_info_t &info) {
    return mixed_size(payload_key(source, tag, seq), info.eager_max, info.buffer_size);
}

// Every sender posts all its messages at once, tags interleaved, so many are in flight together.
void send_all(Job &job, int tag_base, size_t count) {
    Cq cq(job.ctx());
    std::vector<Buffer> bufs;
    bufs.reserve(count * kTagsPerPhase);
    for (uint64_t seq = 0; seq < count; ++seq) {
        for (int t = 0; t < kTagsPerPhase; ++t) {
            const int tag = tag_base + t;
            const size_t size = message_size(job.rank, tag, seq, job.info);
            bufs.emplace_back(size);
            make_message(bufs.back().get(), size, job.rank, tag, seq);
            WSTATUS(msg_isend(job.ctx(), 0, tag, bufs.back().get(), size, cq.get(), nullptr),
                    MSG_OK);
        }
    }
    for (size_t n = 0; n < bufs.size(); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "fifo send");
        WCHECK(c.status == MSG_OK, "fifo send: %s", describe(c).c_str());
    }
    cq.destroy();
}

struct PostedRecv {
    size_t order;  // position in the order receives were posted
    Buffer buf;
    explicit PostedRecv(size_t o, size_t capacity) : order(o), buf(capacity) {}
};

// Matching order is posting order; for every (source, tag) the sequence numbers found in
// receives taken in posting order must run 0, 1, 2, ... with no gap.
class OrderCheck {
  public:
    void record(size_t order, const msg_completion_t &c, const Buffer &buf) {
        WCHECK(c.status == MSG_OK, "fifo receive #%zu: %s", order, describe(c).c_str());
        Stamp s;
        WCHECK(read_stamp(buf.get(), c.bytes, &s), "fifo receive #%zu has no stamp: %s", order,
               describe(c).c_str());
        WCHECK(s.source == c.source && s.tag == c.tag,
               "fifo receive #%zu reports (source %d, tag %d), stamp says (%d, %d)", order,
               c.source, c.tag, s.source, s.tag);
        std::string wrong = check_message(buf.get(), c.bytes, c.source, c.tag, s.seq);
        WCHECK(wrong.empty(), "fifo receive #%zu (source %d, tag %d, seq %llu): %s", order,
               c.source, c.tag, static_cast<unsigned long long>(s.seq), wrong.c_str());
        by_order_[order] = {c.source, c.tag, s.seq};
    }

    void verify(const char *phase, size_t expected_per_stream) const {
        std::map<std::pair<int, int>, uint64_t> next;
        for (const auto &[order, m] : by_order_) {
            uint64_t &want = next[{m.source, m.tag}];
            WCHECK(m.seq == want,
                   "%s: receive #%zu got (source %d, tag %d) seq %llu, but seq %llu was sent first",
                   phase, order, m.source, m.tag, static_cast<unsigned long long>(m.seq),
                   static_cast<unsigned long long>(want));
            ++want;
        }
        for (const auto &[stream, n] : next)
            WCHECK(n == expected_per_stream, "%s: (source %d, tag %d) delivered %llu of %zu", phase,
                   stream.first, stream.second, static_cast<unsigned long long>(n),
                   expected_per_stream);
    }

  private:
    struct Match {
        int source;
        int tag;
        uint64_t seq;
    };
    std::map<size_t, Match> by_order_;
};

// Phase A: receives name the source and tag; all are posted before the senders start.
void receive_specific(Job &job, int tag_base, size_t count, size_t capacity) {
    Cq cq(job.ctx());
    std::vector<PostedRecv> recvs;
    recvs.reserve(count * kTagsPerPhase * (job.size - 1));
    for (int source = 1; source < job.size; ++source)
        for (int t = 0; t < kTagsPerPhase; ++t)
            for (size_t i = 0; i < count; ++i) {
                recvs.emplace_back(recvs.size(), capacity);
                WSTATUS(msg_irecv(job.ctx(), source, tag_base + t, recvs.back().buf.get(), capacity,
                                  cq.get(), &recvs.back()),
                        MSG_OK);
            }
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    OrderCheck check;
    for (size_t n = 0; n < recvs.size(); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "fifo receive (specific)");
        auto *r = static_cast<PostedRecv *>(c.cookie);
        check.record(r->order, c, r->buf);
    }
    check.verify("specific receives", count);
    cq.destroy();
}

// Phase B: a sliding window of (ANY_SOURCE, ANY_TAG) receives posted while messages pour in,
// so some meet posted receives and some wait in the unexpected queue.
void receive_wildcard_window(Job &job, size_t total, size_t window, size_t capacity, size_t count) {
    Cq cq(job.ctx());
    std::vector<PostedRecv> recvs;
    recvs.reserve(total);
    size_t posted = 0;
    auto post_one = [&] {
        recvs.emplace_back(posted++, capacity);
        WSTATUS(msg_irecv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, recvs.back().buf.get(), capacity,
                          cq.get(), &recvs.back()),
                MSG_OK);
    };
    while (posted < window && posted < total) post_one();
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    OrderCheck check;
    for (size_t done = 0; done < total; ++done) {
        msg_completion_t c = wait_completion(cq.get(), "fifo receive (wildcard)");
        auto *r = static_cast<PostedRecv *>(c.cookie);
        check.record(r->order, c, r->buf);
        if (posted < total) post_one();
    }
    check.verify("wildcard receives", count);
    cq.destroy();
}

}  // namespace

void run_fifo(const Args &args) {
    const size_t count = scaled(parse_size_arg(args, 0, 150), 24);
    Job job;
    WCHECK(job.size >= 2, "the fifo scenario needs at least 2 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    const size_t capacity = 4 * job.info.buffer_size + kStampBytes;
    const size_t total = count * kTagsPerPhase * static_cast<size_t>(job.size - 1);

    if (job.rank == 0) {
        receive_specific(job, 0, count, capacity);
        receive_wildcard_window(job, total, 16, capacity, count);
    } else {
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        send_all(job, 0, count);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        send_all(job, 10, count);
    }
    say("fifo: %zu messages per (source, tag) stream, %d tags, both phases in order", count,
        kTagsPerPhase);
    job.finalize();
}

}  // namespace worker
