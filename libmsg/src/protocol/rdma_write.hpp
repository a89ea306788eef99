// The RDMA write rendezvous: RTS -> CTS(accepted, address, key) -> the sender
// writes -> FIN; without a write target both sides move the message by the
// fall-back protocol (send/recv) instead.
#pragma once

#include "protocol/long_protocol.hpp"

namespace msg {

class RdmaWriteProtocol final : public LongProtocol, public RmaClient {
  public:
    // fallback: the protocol a message moves by when no write target is offered.
    RdmaWriteProtocol(ProtocolHost &host, LongProtocol &fallback)
        : host_(host), fallback_(fallback) {}

    int start_send(Request &r) override;
    bool take_cts(Request &r, const WireHeader &cts) override;
    void send_data(Request &r) override;
    void start_recv(Request &r) override;
    bool on_chunk(Request &r, const WireHeader &h, const char *payload, size_t len) override;
    bool on_fin(Request &r, const WireHeader &h) override;
    // Chunks, when the receiver offered no write target.
    int moved_by(const Request &r) const override {
        return r.chunked ? MSG_PROTOCOL_SENDRECV : MSG_PROTOCOL_RDMA_WRITE;
    }

    void piece_done(Request &r) override;

  private:
    ProtocolHost &host_;
    LongProtocol &fallback_;
};

}  // namespace msg
