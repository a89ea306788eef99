// Scenario "killed_peer" (3 ranks): rank 2 serves reads and holds two IPC
// requests unanswered, then is killed. Ranks 0 and 1 see every request to it
// complete — served, or MSG_ERR_PEER_FAILED, at once or through its completion
// — within a bound, new requests to it fail, and they finish their own work
// together and finalize.
#include <signal.h>
#include <unistd.h>

#include "scenarios.hpp"

namespace riotest {

namespace {
constexpr size_t kKilledBlock = 64 * 1024;
constexpr size_t kReads = 32;
constexpr uint32_t kHold = 3;
}  // namespace

void run_killed_peer(const Args &) {
    Node node;
    WCHECK(node.size() == 3, "killed_peer needs 3 ranks, not %d", node.size());
    const int me = node.rank();
    std::unique_ptr<ScratchFile> file;
    uint64_t h = 0;
    if (me == 2) {
        file = std::make_unique<ScratchFile>("victim", kReads * kKilledBlock, 5);
        RSTATUS(rio_export(node.rio(), file->path().c_str(), 0, RIO_EXPORT_TO_END,
                           RIO_EXPORT_READ_ONLY, &h),
                RIO_OK);
        // The export reads through its own descriptor, and this rank dies
        // before any destructor runs: the name goes now.
        WCHECK(unlink(file->path().c_str()) == 0, "removing %s", file->path().c_str());
    }
    h = exchange_handles(node, h)[2];
    if (me == 2) {
        // Take both IPC requests (never answering them), then die.
        for (int got = 0; got < 2;) {
            msg_completion_t c = worker::wait_completion(node.cq(), "the IPC requests");
            if (c.op == RIO_OP_REQUEST) ++got;
        }
        worker::say("dying with two requests unanswered");
        raise(SIGKILL);
    }

    const char *v = std::getenv("VIADUCT_TIMEOUT_MS");
    const double bound =
        2.0 * (v != nullptr ? std::atof(v) : 10000.0) / 1000.0 + 2.0 * worker::slowdown();
    std::vector<std::vector<uint8_t>> bufs(kReads, std::vector<uint8_t>(kKilledBlock));
    int hold_cookie = 0;
    RSTATUS(rio_request(node.rio(), 2, RIO_TARGET_WORKER, kHold, nullptr, 0, nullptr, 0, node.cq(),
                        &hold_cookie),
            RIO_OK);
    // Rank 2 dies once both holds have arrived, which may be while these are posted: a read
    // posted after libmsg learned of the death is refused at once.
    size_t posted = 0, ok = 0, failed = 0;
    for (size_t i = 0; i < kReads; ++i) {
        const int rc = rio_read(node.rio(), 2, h, i * kKilledBlock, bufs[i].data(), kKilledBlock,
                                node.cq(), &bufs[i]);
        WCHECK(rc == RIO_OK || rc == MSG_ERR_PEER_FAILED, "posting read %zu: %d", i, rc);
        ++(rc == RIO_OK ? posted : failed);
    }
    {
        worker::Watchdog dog(bound + 30.0 * worker::slowdown(),
                             "completing the requests to the killed rank");
        for (size_t k = 0; k < posted + 1; ++k) {
            msg_completion_t c = worker::wait_completion(node.cq(), "a request to the dead rank");
            if (c.cookie == &hold_cookie) {
                WCHECK(c.status == MSG_ERR_PEER_FAILED, "held IPC request completed as %s",
                       worker::describe(c).c_str());
                ++failed;
                continue;
            }
            auto *buf = static_cast<std::vector<uint8_t> *>(c.cookie);
            if (c.status == RIO_OK) {
                auto i = static_cast<size_t>(buf - bufs.data());
                WCHECK(
                    check_pattern(buf->data(), kKilledBlock, 5, i * kKilledBlock) == kKilledBlock,
                    "read %zu came back with wrong data", i);
                ++ok;
            } else {
                WCHECK(c.status == MSG_ERR_PEER_FAILED, "read completed as %s",
                       worker::describe(c).c_str());
                ++failed;
            }
        }
    }
    worker::say("SURVIVOR: %zu reads served before the death, %zu requests failed", ok, failed);
    // New requests to the dead rank fail, at once or through their completion.
    uint8_t b[8];
    size_t moved;
    RSTATUS(rio_read_sync(node.rio(), 2, h, 0, b, sizeof b, &moved), MSG_ERR_PEER_FAILED);
    // The survivors still talk to each other.
    uint64_t len = 1;
    RSTATUS(rio_stat(node.rio(), 1 - me, h, &len, nullptr), RIO_ERR_BAD_HANDLE);
    worker::say("SURVIVOR_OK");
    node.finalize(RIO_OK, true);
}

}  // namespace riotest
