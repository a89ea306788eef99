// The long-message protocols of one engine, each built once: the one its
// sends use (the configured protocol where the transport supports it), and
// the one that answers each kind of RTS a peer may send.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocol/long_protocol.hpp"
#include "protocol/restricted.hpp"

namespace msg {

class ProtocolSet {
  public:
    // transport may be null (a job of one: no long message leaves the process).
    ProtocolSet(ProtocolHost &host, Transport *transport, int configured, bool restricted);
    ~ProtocolSet();
    ProtocolSet(const ProtocolSet &) = delete;
    ProtocolSet &operator=(const ProtocolSet &) = delete;

    LongProtocol &for_send() { return *send_; }
    // The protocol the sender of an RTS with these flags chose, for a receive
    // that accepts `accepted` bytes of it.
    LongProtocol &for_offer(uint32_t flags, uint64_t accepted);
    // Forgets the requests waiting for a restricted-mode slot.
    void abort();

  private:
    // What the engine calls for a bare protocol: restricted mode's gate around it, or itself.
    LongProtocol *front(ProtocolHost &host, LongProtocol *bare, bool restricted);

    Transport *transport_;
    RestrictedGate::Slots slots_;
    std::vector<std::unique_ptr<LongProtocol>> owned_;
    LongProtocol *send_recv_ = nullptr, *read_ = nullptr, *write_ = nullptr;
    LongProtocol *send_ = nullptr;
};

}  // namespace msg
