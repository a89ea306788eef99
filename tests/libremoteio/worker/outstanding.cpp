// Scenario "outstanding": every rank issues COUNT requests at once to the
// next rank — 4 KiB reads of its export and shadow-handler echoes, mixed —
// before it waits for any. Each completes exactly once, with its own cookie
// and correct data.
#include "echo_service.hpp"
#include "scenarios.hpp"

namespace riotest {

namespace {
constexpr size_t kOutstandingBlock = 4096;
constexpr uint64_t kOutstandingSeed = 77;
}  // namespace

void run_outstanding(const Args &args) {
    Node node;
    const int me = node.rank(), n = node.size();
    const size_t count = worker::parse_size_arg(args, 0, 1000);
    const int next = (me + 1) % n;
    const auto cases = echo_cases(node.job.info.eager_max, 0);
    EchoHandler handler{me, cases};
    RSTATUS(rio_set_handler(node.rio(), kEchoFirst + 8, echo_handler, &handler), RIO_OK);
    ScratchFile file("out", 256 * kOutstandingBlock, kOutstandingSeed + static_cast<uint64_t>(me));
    uint64_t h = 0;
    RSTATUS(
        rio_export(node.rio(), file.path().c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &h),
        RIO_OK);
    const uint64_t remote = exchange_handles(node, h)[static_cast<size_t>(next)];

    // Case 8 is one byte each way.
    const uint32_t cmd = kEchoFirst + 8;
    const uint8_t one = pattern_byte(request_seed(me, next, cmd), 0);
    std::vector<std::vector<uint8_t>> bufs(count);
    std::vector<int> seen(count, 0);
    for (size_t i = 0; i < count; ++i) {
        if (i % 2 == 0) {
            bufs[i].resize(kOutstandingBlock);
            RSTATUS(rio_read(node.rio(), next, remote, (i % 256) * kOutstandingBlock,
                             bufs[i].data(), kOutstandingBlock, node.cq(), &seen[i]),
                    RIO_OK);
        } else {
            bufs[i].resize(1);
            RSTATUS(rio_request(node.rio(), next, RIO_TARGET_SHADOW, cmd, &one, 1, bufs[i].data(),
                                1, node.cq(), &seen[i]),
                    RIO_OK);
        }
    }
    for (size_t k = 0; k < count; ++k) {
        msg_completion_t c = worker::wait_completion(node.cq(), "one of the outstanding requests");
        auto i = static_cast<size_t>(static_cast<int *>(c.cookie) - seen.data());
        WCHECK(i < count, "foreign cookie: %s", worker::describe(c).c_str());
        WCHECK(seen[i]++ == 0, "request %zu completed twice", i);
        WCHECK(c.status == RIO_OK, "request %zu: %s", i, rio_strerror(c.status));
        if (i % 2 == 0) {
            size_t bad = check_pattern(bufs[i].data(), kOutstandingBlock,
                                       kOutstandingSeed + static_cast<uint64_t>(next),
                                       (i % 256) * kOutstandingBlock);
            WCHECK(c.bytes == kOutstandingBlock && bad == kOutstandingBlock,
                   "read %zu: %zu B, bad byte at %zu", i, c.bytes, bad);
        } else {
            WCHECK(c.bytes == 1 && bufs[i][0] == pattern_byte(reply_seed(me, next, cmd), 0),
                   "echo %zu: %zu B", i, c.bytes);
        }
    }
    msg_completion_t extra;
    WSTATUS(msg_cq_wait(node.cq(), 0, &extra), MSG_ERR_TIMEOUT);
    worker::say("outstanding: %zu requests in flight at once, all answered once", count);
    node.finalize();
}

}  // namespace riotest
