// The send/recv long-message protocol (the paper's choice for all-to-all
// load): RTS -> CTS(accepted) -> chunks through the peer's pre-posted buffers.
#pragma once

#include "protocol/long_protocol.hpp"

namespace msg {

class SendRecvProtocol final : public LongProtocol, public PacketStream {
  public:
    explicit SendRecvProtocol(ProtocolHost &host) : host_(host) {}

    int start_send(Request &r) override;
    bool take_cts(Request &r, const WireHeader &cts) override;
    void send_data(Request &r) override;
    void start_recv(Request &r) override;
    int moved_by(const Request &) const override { return MSG_PROTOCOL_SENDRECV; }
    bool on_chunk(Request &r, const WireHeader &h, const char *payload, size_t len) override;

    PostResult emit(Request &r) override;
    void sent(Request &r, size_t bytes) override;

  private:
    ProtocolHost &host_;
};

}  // namespace msg
