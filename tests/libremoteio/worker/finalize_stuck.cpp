// Scenario "finalize_stuck" (2 ranks): rank 1 does not come to finalize
// until rank 0's has returned. Rank 0's rio_finalize must not wait for it
// without bound: it returns RIO_ERR_TIMEOUT after its timeout. Then rank 1
// finalizes too, and both leave cleanly.
#include <chrono>

#include "scenarios.hpp"

namespace riotest {

namespace {

constexpr int kTagGo = 9;

}  // namespace

void run_finalize_stuck(const Args &) {
    rio_options_t opts;
    rio_options_init(&opts);
    opts.finalize_timeout_ms = 1000 * worker::slowdown();
    Node node(&opts);
    WCHECK(node.size() == 2, "finalize_stuck needs 2 ranks, not %d", node.size());
    if (node.rank() == 0) {
        // Something rank 1 serves, so that the two really talked first.
        uint64_t len = 0;
        RSTATUS(rio_stat(node.rio(), 1, 1, &len, nullptr), RIO_ERR_BAD_HANDLE);
        const auto t0 = std::chrono::steady_clock::now();
        {
            worker::Watchdog dog(60.0 * worker::slowdown(), "rio_finalize with a rank away");
            RSTATUS(rio_finalize(node.rio()), RIO_ERR_TIMEOUT);
        }
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        // It did wait for rank 1 (one timeout at least) before giving up.
        WCHECK(waited >= opts.finalize_timeout_ms / 1000.0,
               "finalize gave up after %.2f s, before its %d ms timeout", waited,
               opts.finalize_timeout_ms);
        worker::say("finalize_stuck: rank 0's finalize gave up after %.2f s", waited);
        WSTATUS(msg_send(node.ctx(), 1, kTagGo, nullptr, 0), MSG_OK);
    } else {
        WSTATUS(msg_recv(node.ctx(), 0, kTagGo, nullptr, 0, nullptr), MSG_OK);
    }
    // Rank 0's rio is finalized already (a second call is a no-op).
    node.finalize();
}

}  // namespace riotest
