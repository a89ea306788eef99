// The RDMA read rendezvous: RTS(address, key) -> the receiver reads -> FIN. On one host,
// unrestricted, the two sides share the copy: the receiver's CTS names its buffer, it reads
// the first half while the sender writes the second, and each tells the other with a FIN.
#pragma once

#include "protocol/long_protocol.hpp"

namespace msg {

// Shared copies start at this size (docs/libmsg.md has the ping-pong behind it); the
// eager limit (8 KiB by default) is below it.
constexpr uint64_t kShareMin = 16u << 10;

class RdmaReadProtocol final : public LongProtocol, public RmaClient {
  public:
    // share: offer and accept shared copies (not in restricted mode, whose gate sends the
    // CTS of a read itself).
    RdmaReadProtocol(ProtocolHost &host, bool share) : host_(host), share_(share) {}

    int start_send(Request &r) override;
    bool take_cts(Request &r, const WireHeader &cts) override;
    void send_data(Request &r) override;
    void start_recv(Request &r) override;
    bool on_fin(Request &r, const WireHeader &h) override;
    int moved_by(const Request &) const override { return MSG_PROTOCOL_RDMA; }
    bool receiver_pulls() const override { return true; }

    void piece_done(Request &r) override;

  private:
    bool start_shared_recv(Request &r);
    bool on_shared_fin(Request &r, const WireHeader &h);
    void finish_recv(Request &r);

    ProtocolHost &host_;
    bool share_;
};

}  // namespace msg
