// RDMA reads and writes of long messages: each message's accepted bytes in
// pieces of at most kRmaPiece, at most kRmaInFlight of them posted at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "protocol/long_protocol.hpp"

namespace msg {

class RmaMover {
  public:
    explicit RmaMover(Transport *transport);
    RmaMover(const RmaMover &) = delete;
    RmaMover &operator=(const RmaMover &) = delete;
    ~RmaMover();

    // Posts r's next pieces, as many as may be in flight: reads into a
    // receive, writes from a send. Again: the queue is full, r waits for
    // retry(); Failed: the transport refused (the peer is lost).
    PostResult post(Request &r, RmaClient &client);
    // A piece has completed: which message it was of, and its bytes.
    struct Piece {
        uint64_t req_id;
        size_t len;
        RmaClient *client;
    };
    Piece finish(OpContext *ctx);
    // The messages that met a full queue since the last call, in order.
    std::deque<std::pair<uint64_t, RmaClient *>> take_waiting();
    size_t in_flight() const { return in_flight_; }

  private:
    struct Op;

    Transport *transport_;
    std::vector<std::unique_ptr<Op>> pool_;
    std::vector<Op *> free_;
    std::deque<std::pair<uint64_t, RmaClient *>> waiting_;
    size_t in_flight_ = 0;
};

}  // namespace msg
