// Scenario "roundtrip": every rank sends every echo case to every rank, its
// own included, once to the worker thread and once to a shadow-thread
// handler; rank 0 also sends one BIG_MIB request to rank 1. Every request's
// data and every reply's data are checked against their patterns.
#include <memory>

#include "echo_service.hpp"
#include "scenarios.hpp"

namespace riotest {

namespace {

struct Pending {
    int dest;
    uint32_t command;
    int target;
    std::vector<uint8_t> request;
    std::vector<uint8_t> reply;
    bool done = false;
};

// Checks one reply: a first completion of its request, from the rank and command asked, of the
// expected length and pattern; marks the request done.
void check_reply(const msg_completion_t &c, int me) {
    WCHECK(c.op == RIO_OP_REPLY, "unexpected completion %s", worker::describe(c).c_str());
    auto *p = static_cast<Pending *>(c.cookie);
    WCHECK(!p->done, "request %u to rank %d completed twice", p->command, p->dest);
    p->done = true;
    WCHECK(c.status == RIO_OK,
           "request %u (%zu B) to rank %d target %d: status %d (%s; 1 = server saw bad "
           "data)",
           p->command, p->request.size(), p->dest, p->target, c.status, rio_strerror(c.status));
    WCHECK(c.source == p->dest && c.tag == static_cast<int>(p->command),
           "completion names rank %d command %d", c.source, c.tag);
    WCHECK(c.bytes == p->reply.size(), "reply %zu B, expected %zu", c.bytes, p->reply.size());
    size_t bad =
        check_pattern(p->reply.data(), p->reply.size(), reply_seed(me, p->dest, p->command));
    WCHECK(bad == p->reply.size(), "reply to %u from rank %d differs at byte %zu of %zu",
           p->command, p->dest, bad, p->reply.size());
}

}  // namespace

void run_roundtrip(const Args &args) {
    Node node;
    const int me = node.rank(), n = node.size();
    const size_t big = worker::parse_size_arg(args, 0, 64) << 20;
    const auto cases = echo_cases(node.job.info.eager_max, n > 1 ? big : 0);
    const uint32_t big_command = kEchoFirst + static_cast<uint32_t>(cases.size()) - 1;
    EchoHandler handler{me, cases};
    RSTATUS(rio_set_handler(node.rio(), RIO_CMD_RESERVED, echo_handler, &handler),
            MSG_ERR_INVALID_ARG);
    for (uint32_t cmd = kEchoFirst; cmd < kEchoFirst + cases.size(); ++cmd)
        RSTATUS(rio_set_handler(node.rio(), cmd, echo_handler, &handler), RIO_OK);
    // No request may arrive before every rank's handlers are in place.
    WSTATUS(msg_barrier(node.ctx()), MSG_OK);

    std::vector<std::unique_ptr<Pending>> pending;
    auto issue = [&](int dest, uint32_t cmd, int target) {
        const EchoCase &k = cases[cmd - kEchoFirst];
        auto p = std::make_unique<Pending>();
        p->dest = dest;
        p->command = cmd;
        p->target = target;
        p->request.resize(k.request_len);
        fill_pattern(p->request.data(), k.request_len, request_seed(me, dest, cmd));
        p->reply.resize(k.reply_len);
        RSTATUS(rio_request(node.rio(), dest, target, cmd, p->request.data(), k.request_len,
                            p->reply.data(), k.reply_len, node.cq(), p.get()),
                RIO_OK);
        pending.push_back(std::move(p));
    };
    size_t expect_served = 0;
    for (int dest = 0; dest < n; ++dest)
        for (uint32_t cmd = kEchoFirst; cmd < big_command; ++cmd)
            for (int target : {RIO_TARGET_WORKER, RIO_TARGET_SHADOW}) issue(dest, cmd, target);
    if (n > 1) {
        if (me == 0) issue(1, big_command, RIO_TARGET_WORKER);
        if (me == 1) ++expect_served;
    }
    expect_served += static_cast<size_t>(n) * (big_command - kEchoFirst);

    size_t served = 0, replies = 0;
    pump(
        node,
        [&](rio_incoming_t *in) {
            serve_echo(node.rio(), in, me, cases);
            ++served;
        },
        [&](const msg_completion_t &c) {
            check_reply(c, me);
            ++replies;
        },
        [&] { return replies == pending.size() && served == expect_served; });

    rio_stats_t s;
    RSTATUS(rio_get_stats(node.rio(), &s), RIO_OK);
    WCHECK(s.requests_issued == pending.size() && s.replies_received == pending.size(),
           "stats: %llu issued, %llu replies, expected %zu",
           static_cast<unsigned long long>(s.requests_issued),
           static_cast<unsigned long long>(s.replies_received), pending.size());
    WCHECK(s.requests_forwarded == expect_served && s.bad_requests == 0,
           "stats: %llu forwarded (expected %zu), %llu bad",
           static_cast<unsigned long long>(s.requests_forwarded), expect_served,
           static_cast<unsigned long long>(s.bad_requests));
    worker::say("roundtrip: %zu requests issued, %zu served by the worker", pending.size(), served);
    node.finalize();
}

}  // namespace riotest
