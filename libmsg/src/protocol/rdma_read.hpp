// The RDMA read rendezvous: RTS(address, key) -> the receiver reads -> FIN.
#pragma once

#include "protocol/long_protocol.hpp"

namespace msg {

class RdmaReadProtocol final : public LongProtocol, public RmaClient {
  public:
    explicit RdmaReadProtocol(ProtocolHost &host) : host_(host) {}

    int start_send(Request &r) override;
    bool take_cts(Request &r, const WireHeader &cts) override;
    void send_data(Request &r) override;
    void start_recv(Request &r) override;
    bool on_fin(Request &r, const WireHeader &h) override;
    int moved_by(const Request &) const override { return MSG_PROTOCOL_RDMA; }
    bool receiver_pulls() const override { return true; }

    void piece_done(Request &r) override;

  private:
    void finish_recv(Request &r);

    ProtocolHost &host_;
};

}  // namespace msg
