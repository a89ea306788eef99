// Scenario "withheld_data" (2 ranks): rank 1 sends rank 0 request headers
// that announce separate data and never sends the data. Rank 0 holds at most
// its per-peer bound for them (the rest are refused with RIO_ERR_PEER_MEMORY),
// its memory does not grow by what was announced, a well-formed request past
// the bound is refused the same way, and finalize still returns on both.
#include <cstdio>
#include <cstring>

#include "msg_internal/one_shot.hpp"
#include "scenarios.hpp"

namespace riotest {

namespace {

constexpr uint32_t kReport = 6;  // shadow handler: rank 0's stats and memory growth
constexpr int kTagDone = 7;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kBound = 16 * kMiB;     // rank 0's peer_memory
constexpr size_t kAnnounced = 8 * kMiB;  // each withheld request's data
constexpr int kWithheld = 8;
constexpr int kHeld = static_cast<int>(kBound / kAnnounced);

// The wire's request header, as a peer that never sends its data would make it.
struct RawHeader {
    uint32_t magic;
    uint16_t version;
    uint8_t target;
    uint8_t flags;
    uint32_t command;
    uint32_t tag_base;
    uint64_t data_len;
    uint64_t reply_capacity;
    uint64_t handle;
    uint64_t offset;
    uint64_t length;
    uint64_t reserved;
};
static_assert(sizeof(RawHeader) == 64);

struct RawReply {
    uint32_t magic;
    uint16_t version;
    uint8_t inline_data;
    uint8_t reserved0;
    int32_t status;
    uint32_t reserved1;
    uint64_t data_len;
    uint64_t sent_len;
};
static_assert(sizeof(RawReply) == 32);

size_t rss_bytes() {
    FILE *f = std::fopen("/proc/self/status", "r");
    WCHECK(f != nullptr, "cannot read /proc/self/status");
    char line[256];
    size_t kb = 0;
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::sscanf(line, "VmRSS: %zu kB", &kb) == 1) break;
    std::fclose(f);
    return kb * 1024;
}

size_t g_baseline_rss = 0;

struct Report {
    rio_stats_t stats;
    uint64_t rss_growth;
};

void report_handler(rio_t *rio, rio_incoming_t *in, void *) {
    Report r{};
    RSTATUS(rio_get_stats(rio, &r.stats), RIO_OK);
    const size_t now = rss_bytes();
    r.rss_growth = now > g_baseline_rss ? now - g_baseline_rss : 0;
    RSTATUS(rio_reply(rio, in, RIO_OK, &r, sizeof r), RIO_OK);
}

uint32_t tag_base_of(int i) {
    return RIO_TAG_FIRST + 0x100000 + static_cast<uint32_t>(i) * 4;
}

// Sends the headers and collects the refusals; returns how many were refused.
int withhold(Node &node) {
    std::vector<RawReply> replies(kWithheld);
    worker::Cq cq(node.ctx());
    for (int i = 0; i < kWithheld; ++i)
        WSTATUS(msg_irecv_flags(node.ctx(), 0, static_cast<int>(tag_base_of(i)), &replies[i],
                                sizeof replies[i], cq.get(), &replies[i], MSG_FLAG_RESERVED_TAG),
                MSG_OK);
    for (int i = 0; i < kWithheld; ++i) {
        RawHeader h{};
        h.magic = 0x52494f51;
        h.version = 1;
        h.target = RIO_TARGET_SHADOW;
        h.flags = 0;  // the data is to follow on its own: it never does
        h.command = 4242;
        h.tag_base = tag_base_of(i);
        h.data_len = kAnnounced;
        // libremoteio's own tag: only the reserved-tag path may send on it.
        WSTATUS(viaduct::one_shot(node.ctx(),
                                  [&](msg_cq_t *q) {
                                      return msg_isend_flags(node.ctx(), 0, RIO_TAG_FIRST, &h,
                                                             sizeof h, q, nullptr,
                                                             MSG_FLAG_RESERVED_TAG);
                                  }),
                MSG_OK);
    }
    // Headers from one rank are taken in order: the first kHeld fit the bound.
    const int timeout = 30000 * worker::slowdown();
    int refused = 0;
    for (int n = 0; n < kWithheld - kHeld; ++n) {
        msg_completion_t c{};
        WSTATUS(msg_cq_wait(cq.get(), timeout, &c), MSG_OK);
        WSTATUS(c.status, MSG_OK);
        auto *r = static_cast<RawReply *>(c.cookie);
        const int i = static_cast<int>(r - replies.data());
        WCHECK(i >= kHeld, "withheld request %d, within the bound, was answered", i);
        RSTATUS(r->status, RIO_ERR_PEER_MEMORY);
        ++refused;
    }
    // The held ones are not answered until their data comes; stop listening.
    size_t canceled = 0;
    WSTATUS(msg_cq_cancel_recvs(cq.get(), &canceled), MSG_OK);
    WCHECK(canceled == static_cast<size_t>(kHeld), "%zu receives still open, expected %d", canceled,
           kHeld);
    for (size_t n = 0; n < canceled; ++n) {
        msg_completion_t c{};
        WSTATUS(msg_cq_wait(cq.get(), timeout, &c), MSG_OK);
        WSTATUS(c.status, MSG_ERR_CANCELED);
    }
    return refused;
}

}  // namespace

void run_withheld_data(const Args &) {
    rio_options_t opts;
    rio_options_init(&opts);
    opts.max_transfer = 64 * kMiB;
    opts.peer_memory = kBound;
    Node node(&opts);
    WCHECK(node.size() == 2, "withheld_data needs 2 ranks, not %d", node.size());
    const int me = node.rank();
    if (me == 0) {
        RSTATUS(rio_set_handler(node.rio(), kReport, report_handler, nullptr), RIO_OK);
        g_baseline_rss = rss_bytes();
    }
    WSTATUS(msg_barrier(node.ctx()), MSG_OK);
    if (me == 1) {
        const int refused = withhold(node);
        // A well-formed request past what rank 0 still allows this rank is refused, by name,
        // and completes (its data is drained); so is one past the bound on its own.
        std::vector<uint8_t> data(24 * kMiB, 0x5a);
        RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, 4242, data.data(), data.size(), nullptr,
                         0, nullptr),
                RIO_ERR_PEER_MEMORY);
        RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, 4242, data.data(), kMiB, nullptr, 0,
                         nullptr),
                RIO_ERR_PEER_MEMORY);
        Report r{};
        size_t got = 0;
        RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, kReport, nullptr, 0, &r, sizeof r, &got),
                RIO_OK);
        WCHECK(got == sizeof r, "report %zu B", got);
        WCHECK(r.stats.request_data_held <= kBound,
               "rank 0 holds %llu B of request data, over its %zu B bound",
               static_cast<unsigned long long>(r.stats.request_data_held), kBound);
        WCHECK(r.stats.request_data_held == kHeld * kAnnounced,
               "rank 0 holds %llu B of request data, expected %zu",
               static_cast<unsigned long long>(r.stats.request_data_held), kHeld * kAnnounced);
        // Announced: kWithheld x 8 MiB. Held: address space only until data comes.
        WCHECK(r.rss_growth < kBound, "rank 0's memory grew by %llu B for data that never came",
               static_cast<unsigned long long>(r.rss_growth));
        worker::say("withheld_data: %d of %d withheld requests refused, %llu B held, rss +%llu B",
                    refused, kWithheld, static_cast<unsigned long long>(r.stats.request_data_held),
                    static_cast<unsigned long long>(r.rss_growth));
        WSTATUS(msg_send(node.ctx(), 0, kTagDone, nullptr, 0), MSG_OK);
    } else {
        WSTATUS(msg_recv(node.ctx(), 1, kTagDone, nullptr, 0, nullptr), MSG_OK);
    }
    // Rank 0 still holds two requests whose data will never come: finalize
    // withdraws them and returns.
    node.finalize();
}

}  // namespace riotest
