// The engine's receive buffers (receive_buffers.hpp).
#include "protocol/receive_buffers.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "common/log.hpp"
#include "msg/msg.h"
#include "viaduct/host_memory.hpp"

namespace msg {

namespace {

// What this process may still allocate: the host's (and its cgroup's)
// available memory, and the data-size limit.
uint64_t memory_allowed() {
    uint64_t allowed = viaduct::host_memory().usable();
    struct rlimit rl {};
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        allowed = std::min<uint64_t>(allowed, rl.rlim_cur);
    return allowed;
}

}  // namespace

int ReceiveBuffers::init(Transport *transport, int peers, const ReceivePlan &plan, size_t size) {
    transport_ = transport;
    size_ = size;
    const size_t count = plan.buffers();
    const double bytes = static_cast<double>(count) * static_cast<double>(size);
    if (const uint64_t allowed = memory_allowed(); bytes > static_cast<double>(allowed)) {
        log_error(
            "receive buffers for %d peer%s need %s (%zu of %zu bytes), more than the %s this "
            "process may have; lower VIADUCT_BUFFER_SIZE, VIADUCT_CREDITS or "
            "VIADUCT_ACTIVE_PEERS, or run fewer ranks per host",
            peers, peers == 1 ? "" : "s", viaduct::mib(bytes).c_str(), count, size,
            viaduct::mib(static_cast<double>(allowed)).c_str());
        return MSG_ERR_NO_MEMORY;
    }
    log_info("receive buffers: %zu of %zu bytes (%s) for %d peers, %zu of them spare", count, size,
             viaduct::mib(bytes).c_str(), peers, plan.spare);
    slab_.reset(new (std::nothrow) char[count * size]);
    if (!slab_) {
        log_error("receive buffers for %d peers: %s could not be allocated", peers,
                  viaduct::mib(bytes).c_str());
        return MSG_ERR_NO_MEMORY;
    }
    if (transport_->needs_local_registration() &&
        transport_->register_memory(slab_.get(), count * size, kLocal, &mr_) != 0)
        return MSG_ERR_TRANSPORT;
    for (size_t i = 0; i < count; ++i) {
        auto b = std::make_unique<Buffer>();
        b->data = slab_.get() + i * size;
        if (i < plan.posted)
            (void)post(b.get());
        else
            spare_.push_back(b.get());
        all_.push_back(std::move(b));
    }
    return MSG_OK;
}

bool ReceiveBuffers::post(Buffer *b) {
    void *desc = mr_ ? mr_->desc() : nullptr;
    const int rc = transport_->post_recv(b->data, size_, desc, &b->ctx);
    if (rc == 0) return true;
    if (rc != -EAGAIN) log_error("posting a receive buffer failed: %s", std::strerror(-rc));
    waiting_.push_back(b);
    return false;
}

bool ReceiveBuffers::post_waiting() {
    std::vector<Buffer *> again;
    again.swap(waiting_);
    bool all = true;
    for (Buffer *b : again) all = post(b) && all;
    return all;
}

bool ReceiveBuffers::settle(Buffer *b, ReceivePool::Credit credit) {
    if (credit == ReceivePool::Credit::Reclaim) {
        spare_.push_back(b);
        return true;
    }
    bool posted = post(b);
    if (credit == ReceivePool::Credit::Grant) {
        Buffer *extra = spare_.back();
        spare_.pop_back();
        posted = post(extra) && posted;
    }
    return posted;
}

}  // namespace msg
