// The long-message protocols of one engine, each built once: the one a send
// of a given size uses (ProtocolChoice's, where the transport supports it),
// and the one that answers each kind of RTS a peer may send.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocol/long_protocol.hpp"
#include "protocol/protocol_choice.hpp"
#include "protocol/restricted.hpp"

namespace msg {

class ProtocolSet {
  public:
    // transport may be null (a job of one: no long message leaves the process).
    ProtocolSet(ProtocolHost &host, Transport *transport, const ProtocolChoice &choice,
                bool restricted);
    ~ProtocolSet();
    ProtocolSet(const ProtocolSet &) = delete;
    ProtocolSet &operator=(const ProtocolSet &) = delete;

    // The protocol of a long send of len bytes.
    LongProtocol &for_send(size_t len) { return *usable(choice_.pick(len)); }
    const ProtocolChoice &choice() const { return choice_; }
    // The protocol the sender of an RTS with these flags chose, for a receive
    // that accepts `accepted` bytes of it.
    LongProtocol &for_offer(uint32_t flags, uint64_t accepted);
    // Forgets the requests waiting for a restricted-mode slot.
    void abort();

  private:
    // What the engine calls for a bare protocol: restricted mode's gate around it, or itself.
    LongProtocol *front(ProtocolHost &host, LongProtocol *bare, bool restricted);
    // `protocol`'s object, or send/recv's where the transport lacks its RDMA operation.
    LongProtocol *usable(int protocol) const;

    Transport *transport_;
    ProtocolChoice choice_;
    RestrictedGate::Slots slots_;
    std::vector<std::unique_ptr<LongProtocol>> owned_;
    LongProtocol *send_recv_ = nullptr, *read_ = nullptr, *write_ = nullptr;
};

}  // namespace msg
