// Scenario "shutdown_load": every rank fires COUNT requests at every other
// rank's shadow thread (reads and echoes) and calls rio_finalize at once,
// without waiting. Finalize must let all of them finish, on every rank: the
// CQ then holds exactly COUNT x (ranks - 1) successful completions.
#include "echo_service.hpp"
#include "scenarios.hpp"

namespace riotest {

void run_shutdown_load(const Args &args) {
    Node node;
    const int me = node.rank(), n = node.size();
    const size_t count = worker::parse_size_arg(args, 0, 200);
    constexpr size_t kBlock = 32 * 1024;
    const auto cases = echo_cases(node.job.info.eager_max, 0);
    EchoHandler handler{me, cases};
    const uint32_t cmd = kEchoFirst + 12;  // 64 KiB each way
    RSTATUS(rio_set_handler(node.rio(), cmd, echo_handler, &handler), RIO_OK);
    ScratchFile file("load", 64 * kBlock, 9);
    uint64_t h = 0;
    RSTATUS(
        rio_export(node.rio(), file.path().c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &h),
        RIO_OK);
    const auto handles = exchange_handles(node, h);

    const EchoCase &k = cases[cmd - kEchoFirst];
    struct Op {
        int dest;
        bool read;
        std::vector<uint8_t> request, reply;
    };
    std::vector<Op> ops;
    ops.reserve(count * static_cast<size_t>(n));
    for (int dest = 0; dest < n; ++dest) {
        if (dest == me) continue;
        for (size_t i = 0; i < count; ++i) {
            Op &op = ops.emplace_back();
            op.dest = dest;
            op.read = i % 2 == 0;
            if (op.read) {
                op.reply.resize(kBlock);
                RSTATUS(rio_read(node.rio(), dest, handles[static_cast<size_t>(dest)],
                                 (i % 64) * kBlock, op.reply.data(), kBlock, node.cq(), &op),
                        RIO_OK);
            } else {
                op.request.resize(k.request_len);
                fill_pattern(op.request.data(), k.request_len, request_seed(me, dest, cmd));
                op.reply.resize(k.reply_len);
                RSTATUS(rio_request(node.rio(), dest, RIO_TARGET_SHADOW, cmd, op.request.data(),
                                    op.request.size(), op.reply.data(), op.reply.size(), node.cq(),
                                    &op),
                        RIO_OK);
            }
        }
    }
    {
        worker::Watchdog dog(120.0 * worker::slowdown(), "rio_finalize under load");
        RSTATUS(rio_finalize(node.rio()), RIO_OK);
    }
    // Requests after finalize are refused, not lost.
    uint8_t b;
    RSTATUS(rio_read(node.rio(), 0, 1, 0, &b, 1, node.cq(), nullptr), MSG_ERR_FINALIZED);
    size_t done = 0;
    for (;;) {
        msg_completion_t c{};
        int rc = msg_cq_wait(node.cq(), 0, &c);
        if (rc == MSG_ERR_TIMEOUT) break;
        WSTATUS(rc, MSG_OK);
        auto *op = static_cast<Op *>(c.cookie);
        WCHECK(c.status == RIO_OK, "request to rank %d: %s", op->dest, rio_strerror(c.status));
        size_t i = static_cast<size_t>(op - ops.data()) % count;
        if (op->read)
            WCHECK(check_pattern(op->reply.data(), kBlock, 9, (i % 64) * kBlock) == kBlock,
                   "read %zu from rank %d: wrong data", i, op->dest);
        else
            WCHECK(check_pattern(op->reply.data(), op->reply.size(),
                                 reply_seed(me, op->dest, cmd)) == op->reply.size(),
                   "echo %zu from rank %d: wrong data", i, op->dest);
        ++done;
    }
    WCHECK(done == ops.size(), "%zu of %zu requests completed by the end of finalize", done,
           ops.size());
    worker::say("shutdown_load: finalize let all %zu requests finish", done);
    node.finalize();
}

}  // namespace riotest
