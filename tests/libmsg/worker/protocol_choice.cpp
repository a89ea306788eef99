// Scenario "protocol_choice": each long message goes by the protocol the job's table (msg_get_
// protocol_table) gives its size, or by send/recv where the fabric lacks that RDMA operation;
// under auto, the table is the fabric's own. Rank 0 sends one message just past each range's
// start and one at its end to rank 1, one at a time, and both ranks count what moved each.
#include <cstdint>
#include <cstring>
#include <string>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

struct Table {
    std::vector<msg_protocol_range_t> ranges;
};

Table table_of(const Job &job) {
    size_t n = 0;
    WSTATUS(msg_get_protocol_table(job.ctx(), nullptr, 0, &n), MSG_OK);
    Table t;
    t.ranges.resize(n);
    size_t again = 0;
    WSTATUS(msg_get_protocol_table(job.ctx(), t.ranges.data(), n, &again), MSG_OK);
    WCHECK(n >= 1 && again == n && t.ranges.back().max_bytes == SIZE_MAX,
           "a table of %zu ranges ending at %zu", n, n ? t.ranges.back().max_bytes : 0);
    return t;
}

// Sizes to try: each range's first and last size (the last range's first, and 3 MiB past it).
std::vector<size_t> sizes(const Table &t, size_t eager_max) {
    std::vector<size_t> out;
    size_t first = eager_max + 1;
    for (const msg_protocol_range_t &r : t.ranges) {
        out.push_back(first);
        out.push_back(r.max_bytes == SIZE_MAX ? first + (3u << 20) : r.max_bytes);
        if (r.max_bytes != SIZE_MAX) first = r.max_bytes + 1;
    }
    return out;
}

int protocol_for(const Table &t, size_t len) {
    for (const msg_protocol_range_t &r : t.ranges)
        if (len <= r.max_bytes) return r.protocol;
    return t.ranges.back().protocol;
}

// The counter of long messages `protocol` moved, sent or received.
uint64_t moved_by(const msg_stats_t &s, int protocol, bool received) {
    switch (protocol) {
        case MSG_PROTOCOL_RDMA:
            return received ? s.long_received_rdma_read : s.long_sent_rdma_read;
        case MSG_PROTOCOL_RDMA_WRITE:
            return received ? s.long_received_rdma_write : s.long_sent_rdma_write;
        default:
            return received ? s.long_received_sendrecv : s.long_sent_sendrecv;
    }
}

}  // namespace

void run_protocol_choice(const Args &) {
    Job job;
    WCHECK(job.size == 2, "needs 2 ranks, has %d", job.size);
    const Table t = table_of(job);
    const std::vector<size_t> all = sizes(t, job.info.eager_max);
    const bool receiver = job.rank == 1;
    Cq cq(job.ctx());
    for (size_t i = 0; i < all.size(); ++i) {
        const size_t len = all[i];
        Buffer buf(len);
        const msg_stats_t before = get_stats(job);
        if (receiver) {
            WSTATUS(msg_irecv(job.ctx(), 0, 7, buf.get(), len, cq.get(), nullptr), MSG_OK);
        } else {
            make_message(buf.get(), len, 0, 7, i);
            WSTATUS(msg_isend(job.ctx(), 1, 7, buf.get(), len, cq.get(), nullptr), MSG_OK);
        }
        const msg_completion_t c = wait_completion(cq.get(), "the message");
        WCHECK(c.status == MSG_OK, "%zu bytes: status %d", len, c.status);
        if (receiver) {
            const std::string wrong = check_message(buf.get(), len, 0, 7, i);
            WCHECK(wrong.empty(), "%zu bytes: %s", len, wrong.c_str());
        }
        const msg_stats_t after = get_stats(job);
        const int want = protocol_for(t, len);
        const uint64_t by_want = moved_by(after, want, receiver) - moved_by(before, want, receiver);
        const uint64_t by_fallback = moved_by(after, MSG_PROTOCOL_SENDRECV, receiver) -
                                     moved_by(before, MSG_PROTOCOL_SENDRECV, receiver);
        // send/recv stands in for an RDMA protocol only where the fabric lacks it.
        WCHECK(by_want == 1 || (want != MSG_PROTOCOL_SENDRECV && by_fallback == 1),
               "%zu bytes went by neither %s, the table's protocol for it, nor send/recv", len,
               msg_protocol_name(want));
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    }
    say("%zu sizes over %zu ranges (%s), each by its range's protocol", all.size(), t.ranges.size(),
        msg_protocol_name(job.info.long_protocol));
    cq.destroy();
    job.finalize();
}

}  // namespace worker
