// The engine's receive buffers: one slab, registered once, cut into buffers
// of buffer_size bytes that the fabric fills; posted to the transport, kept
// spare for the pool to grant, or waiting for room in a full receive queue.
// The slab is not written before the fabric does (a buffer never filled costs
// no memory on a fabric that does not pin it). ReceivePool decides, per
// consumed packet, whether its buffer goes back to the fabric or becomes spare.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "protocol/receive_pool.hpp"
#include "transport/transport.hpp"

namespace msg {

class ReceiveBuffers {
  public:
    // A buffer; starts with the context the transport hands back.
    struct Buffer {
        OpContext ctx;
        char *data = nullptr;
    };

    ReceiveBuffers() = default;
    ReceiveBuffers(const ReceiveBuffers &) = delete;
    ReceiveBuffers &operator=(const ReceiveBuffers &) = delete;

    // Allocates plan.buffers() buffers of `size` bytes for the `peers` of
    // this rank and posts plan.posted of them. MSG_ERR_NO_MEMORY, said on
    // stderr, when they are more than this process may have.
    int init(Transport *transport, int peers, const ReceivePlan &plan, size_t size);
    size_t count() const { return all_.size(); }
    size_t size() const { return size_; }

    // The buffer a receive completion names.
    static Buffer *of(OpContext *ctx) { return reinterpret_cast<Buffer *>(ctx); }

    // Posts b to the transport. False when the queue was full or the post
    // failed: b then waits for post_waiting.
    bool post(Buffer *b);
    // Posts the buffers that waited. False if some wait still.
    bool post_waiting();
    bool has_waiting() const { return !waiting_.empty(); }
    // A consumed packet's buffer, as the pool's answer says: posted again
    // (Return), kept spare (Reclaim), or posted with a spare one (Grant).
    // False if a post had to wait.
    bool settle(Buffer *b, ReceivePool::Credit credit);

  private:
    Transport *transport_ = nullptr;
    size_t size_ = 0;
    std::unique_ptr<char[]> slab_;
    std::unique_ptr<MemoryRegion> mr_;
    std::vector<std::unique_ptr<Buffer>> all_;
    std::vector<Buffer *> waiting_;  // not posted: the queue was full
    std::vector<Buffer *> spare_;    // the pool's buffers not posted
};

}  // namespace msg
