// The libmsg long-message layer over the BTE: a message is cut into transfers (the
// send/recv protocol's chunks through pre-posted buffers), `window` of them in flight. In
// restricted mode a node runs one long send and one long receive at a time (the paper's lock).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/histogram.hpp"
#include "model/network.hpp"

namespace sansim {

struct Message {
    int src = 0, dst = 0;
    std::uint64_t bytes = 0, issued = 0, done = 0;
    Time posted = 0, started = -1;
    std::uint64_t tag = 0;
    int in_flight = 0;
    Time setup = -1;  // this message's handshake; < 0: the layer's setup_us
};

class MessageListener {
  public:
    virtual ~MessageListener() = default;
    virtual void message_done(Network &net, std::uint32_t id, const Message &m) = 0;
};

struct MessageOptions {
    bool restricted = false;
    std::uint64_t transfer_bytes = 4096;
    int window = 2;
    double setup_us = 5.0;  // request-to-send handshake before the first chunk
};

class MessageLayer : public TransferClient {
  public:
    MessageLayer(Network &net, MessageOptions opt, MessageListener *listener);
    // setup >= 0 replaces setup_us for this message (an eager message has no handshake).
    std::uint32_t send(int src, int dst, std::uint64_t bytes, std::uint64_t tag, Time setup = -1);
    void transfer_done(Network &net, std::uint32_t transfer, std::uint64_t tag) override;
    void timer(Network &net, std::uint32_t arg) override;

    const Histogram &latency() const { return latency_; }
    std::uint64_t messages_done() const { return messages_done_; }
    std::uint64_t bytes_done() const { return bytes_done_; }
    const MessageOptions &options() const { return opt_; }
    // Messages a node has posted that are not done yet.
    int open_messages(int node) const { return open_[static_cast<std::size_t>(node)]; }

  private:
    void try_start_sender(int s);
    void try_start_receiver(int d);
    void begin(std::uint32_t id);
    void pump(std::uint32_t id);

    Network &net_;
    MessageOptions opt_;
    MessageListener *listener_;
    std::vector<Message> messages_;
    std::vector<std::uint32_t> free_messages_;        // ids of finished messages, to reuse
    std::vector<std::deque<std::uint32_t>> pending_;  // per sender, in posting order
    std::vector<char> send_busy_, recv_busy_;
    std::vector<int> open_;  // per sender
    int receiver_scan_ = 0;
    Histogram latency_;
    std::uint64_t messages_done_ = 0, bytes_done_ = 0;
};

}  // namespace sansim
