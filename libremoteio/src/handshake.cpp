// Finalize's handshake over the fabric, bounded, so that a rank that never
// gets to finalize costs a timeout rather than a hang: one empty message to
// and from every other rank, on a tag of its own.
#include "handshake.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "rio/rio.h"
#include "wire.hpp"

namespace remoteio {

namespace {

// The handshake's messages (empty): "I have all my replies".
constexpr int kTagFinalize = kTagRequest + 1;
static_assert(kTagFinalize < kTagFirstDynamic);

}  // namespace

int finalize_handshake(msg_context_t *msg, int rank, int size, int timeout_ms) {
    if (size == 1) return RIO_OK;
    msg_cq_t *cq = nullptr;
    int rc = msg_cq_create(msg, &cq);
    if (rc != MSG_OK) return rc;
    int pending = 0, status = RIO_OK;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        if (msg_irecv_flags(msg, peer, kTagFinalize, nullptr, 0, cq, nullptr,
                            MSG_FLAG_RESERVED_TAG) == MSG_OK)
            ++pending;
        if (msg_isend_flags(msg, peer, kTagFinalize, nullptr, 0, cq, nullptr,
                            MSG_FLAG_RESERVED_TAG) == MSG_OK)
            ++pending;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool canceled = false;
    while (pending > 0) {
        // Rounded up: a wait cut short by rounding would give up before the deadline.
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
        msg_completion_t c{};
        rc = msg_cq_wait(cq, canceled ? 1000 : static_cast<int>(std::max<int64_t>(left.count(), 0)),
                         &c);
        if (rc == MSG_ERR_TIMEOUT) {
            if (canceled) break;  // a send to a rank that takes nothing: leave it
            if (std::chrono::steady_clock::now() < deadline) continue;  // woke early
            // A rank that never got here: stop listening for it.
            status = RIO_ERR_TIMEOUT;
            msg_cq_cancel_recvs(cq, nullptr);
            canceled = true;
            continue;
        }
        if (rc != MSG_OK) {
            status = rc;
            break;
        }
        --pending;
        // A failed rank is not waited for; its word is not needed.
        if (c.status != MSG_OK && c.status != MSG_ERR_PEER_FAILED && c.status != MSG_ERR_CANCELED &&
            status == RIO_OK)
            status = c.status;
    }
    // A CQ with a send still bound cannot be freed; it then stays allocated.
    msg_cq_destroy(cq);
    return status;
}

}  // namespace remoteio
