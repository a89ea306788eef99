// Builds the long-message protocols once and picks among them: sends by the
// protocol choice for their size (send/recv where the transport lacks the RDMA
// operation it needs), receives by what the sender's RTS offers.
#include "protocol/protocol_set.hpp"

#include "protocol/rdma_read.hpp"
#include "protocol/rdma_write.hpp"
#include "protocol/send_recv.hpp"

namespace msg {

ProtocolSet::ProtocolSet(ProtocolHost &host, Transport *transport, const ProtocolChoice &choice,
                         bool restricted)
    : transport_(transport), choice_(choice) {
    auto send_recv = std::make_unique<SendRecvProtocol>(host);
    auto read = std::make_unique<RdmaReadProtocol>(host, !restricted);
    // A write falls back to the bare send/recv protocol: the gate, if any,
    // is already around the write.
    auto write = std::make_unique<RdmaWriteProtocol>(host, *send_recv);
    send_recv_ = front(host, send_recv.get(), restricted);
    read_ = front(host, read.get(), restricted);
    write_ = front(host, write.get(), restricted);
    owned_.push_back(std::move(send_recv));
    owned_.push_back(std::move(read));
    owned_.push_back(std::move(write));
}

LongProtocol *ProtocolSet::usable(int protocol) const {
    if (transport_ == nullptr) return send_recv_;
    if (protocol == MSG_PROTOCOL_RDMA && transport_->supports_rdma_read()) return read_;
    if (protocol == MSG_PROTOCOL_RDMA_WRITE && transport_->supports_rdma_write()) return write_;
    return send_recv_;
}

ProtocolSet::~ProtocolSet() = default;

LongProtocol *ProtocolSet::front(ProtocolHost &host, LongProtocol *bare, bool restricted) {
    if (!restricted) return bare;
    owned_.push_back(std::make_unique<RestrictedGate>(host, *bare, slots_));
    return owned_.back().get();
}

LongProtocol &ProtocolSet::for_offer(uint32_t flags, uint64_t accepted) {
    if ((flags & kFlagRdmaRead) != 0) return *read_;
    // Nothing to write (truncated to zero bytes): a plain CTS, as send/recv.
    if ((flags & kFlagRdmaWrite) != 0 && accepted > 0 && transport_ != nullptr &&
        transport_->supports_rdma_write())
        return *write_;
    return *send_recv_;
}

void ProtocolSet::abort() {
    for (auto &p : owned_) p->abort();
}

}  // namespace msg
