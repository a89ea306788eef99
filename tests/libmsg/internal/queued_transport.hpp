// The in-memory part of the test transports (tests/libmsg/internal's scripted transport and the
// engine fuzz target's): no addresses or connections, a completion waits in a queue until the
// engine polls, and a posted receive waits in a queue for the packet the test lands in it.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "transport/transport.hpp"

namespace testtransport {

class QueuedTransport : public msg::Transport {
  public:
    std::vector<uint8_t> address() const override { return {}; }
    int connect(const std::vector<std::vector<uint8_t>> &) override { return 0; }
    bool needs_local_registration() const override { return false; }
    size_t max_iov() const override { return 2; }
    int post_recv(void *buf, size_t len, void *, msg::OpContext *ctx) override {
        posted_.push_back({static_cast<char *>(buf), len, ctx});
        return 0;
    }
    int poll(msg::TransportCompletion *out, int max) override {
        int n = 0;
        while (n < max && !done_.empty()) {
            out[n++] = done_.front();
            done_.pop_front();
        }
        return n;
    }
    void shutdown() override {}
    int wait_fd() const override { return -1; }

  protected:
    struct Posted {
        char *buf;
        size_t len;
        msg::OpContext *ctx;
    };
    std::deque<Posted> posted_;
    std::deque<msg::TransportCompletion> done_;
};

}  // namespace testtransport
