// Restricted mode (the paper's lock) as a gate around any long-message
// protocol: one long send and one long receive move data per process.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "protocol/long_protocol.hpp"

namespace msg {

class RestrictedGate final : public LongProtocol {
  public:
    // The process's two slots, shared by the gates around every protocol.
    struct Slots {
        uint64_t send_holder = 0, recv_holder = 0;  // request ids; 0: none
        bool send_busy = false, recv_busy = false;
        std::deque<std::pair<uint64_t, RestrictedGate *>> send_waiting, recv_waiting;
    };

    RestrictedGate(ProtocolHost &host, LongProtocol &inner, Slots &slots)
        : host_(host), inner_(inner), slots_(slots) {}

    int start_send(Request &r) override { return inner_.start_send(r); }
    bool take_cts(Request &r, const WireHeader &cts) override;
    void send_data(Request &r) override;
    void start_recv(Request &r) override;
    bool on_chunk(Request &r, const WireHeader &h, const char *payload, size_t len) override {
        return inner_.on_chunk(r, h, payload, len);
    }
    bool on_go(Request &r, const WireHeader &h) override;
    bool on_fin(Request &r, const WireHeader &h) override { return inner_.on_fin(r, h); }
    int moved_by(const Request &r) const override { return inner_.moved_by(r); }
    bool receiver_pulls() const override { return inner_.receiver_pulls(); }
    void ended(uint64_t id, bool is_send) override;
    void abort() override;

  private:
    void admit_send(Request &r);
    void admit_recv(Request &r);
    void release_send();
    void release_recv();

    ProtocolHost &host_;
    LongProtocol &inner_;
    Slots &slots_;
};

}  // namespace msg
