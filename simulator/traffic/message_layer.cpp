// Restricted mode's lock is granted in posting order at the sender and, when a receiver frees
// up, to the next sender (round robin) that is free and has a message waiting for it.
#include "traffic/message_layer.hpp"

#include <algorithm>

namespace sansim {

MessageLayer::MessageLayer(Network &net, MessageOptions opt, MessageListener *listener)
    : net_(net), opt_(opt), listener_(listener) {
    const auto n = static_cast<std::size_t>(net.nodes());
    pending_.resize(n);
    send_busy_.assign(n, 0);
    recv_busy_.assign(n, 0);
    open_.assign(n, 0);
    if (opt_.transfer_bytes == 0) opt_.transfer_bytes = 1;
    opt_.window = std::max(1, opt_.window);
}

std::uint32_t MessageLayer::send(int src, int dst, std::uint64_t bytes, std::uint64_t tag,
                                 Time setup) {
    if (bytes == 0) bytes = 1;  // a zero-byte message still crosses the network once
    Message m;
    m.src = src;
    m.dst = dst;
    m.bytes = bytes;
    m.posted = net_.now();
    m.tag = tag;
    m.setup = setup;
    std::uint32_t id;
    if (free_messages_.empty()) {
        messages_.push_back(m);
        id = static_cast<std::uint32_t>(messages_.size() - 1);
    } else {
        id = free_messages_.back();
        free_messages_.pop_back();
        messages_[id] = m;
    }
    pending_[static_cast<std::size_t>(src)].push_back(id);
    ++open_[static_cast<std::size_t>(src)];
    try_start_sender(src);
    return id;
}

void MessageLayer::try_start_sender(int s) {
    auto &q = pending_[static_cast<std::size_t>(s)];
    if (!opt_.restricted) {
        while (!q.empty()) {
            const std::uint32_t id = q.front();
            q.pop_front();
            begin(id);
        }
        return;
    }
    if (send_busy_[static_cast<std::size_t>(s)]) return;
    for (auto it = q.begin(); it != q.end(); ++it) {
        if (recv_busy_[static_cast<std::size_t>(messages_[*it].dst)]) continue;
        const std::uint32_t id = *it;
        q.erase(it);
        begin(id);
        return;
    }
}

void MessageLayer::try_start_receiver(int d) {
    const int n = net_.nodes();
    for (int i = 0; i < n && !recv_busy_[static_cast<std::size_t>(d)]; ++i) {
        const int s = (receiver_scan_ + i) % n;
        if (send_busy_[static_cast<std::size_t>(s)]) continue;
        auto &q = pending_[static_cast<std::size_t>(s)];
        for (auto it = q.begin(); it != q.end(); ++it) {
            if (messages_[*it].dst != d) continue;
            const std::uint32_t id = *it;
            q.erase(it);
            receiver_scan_ = s + 1;
            begin(id);
            break;
        }
    }
}

void MessageLayer::begin(std::uint32_t id) {
    Message &m = messages_[id];
    if (opt_.restricted) {
        send_busy_[static_cast<std::size_t>(m.src)] = 1;
        recv_busy_[static_cast<std::size_t>(m.dst)] = 1;
    }
    net_.schedule_timer(net_.now() + (m.setup >= 0 ? m.setup : from_us(opt_.setup_us)), this, id);
}

void MessageLayer::timer(Network &, std::uint32_t arg) {
    const auto id = static_cast<std::uint32_t>(arg);
    messages_[id].started = net_.now();
    pump(id);
}

void MessageLayer::pump(std::uint32_t id) {
    Message &m = messages_[id];
    while (m.in_flight < opt_.window && m.issued < m.bytes) {
        const std::uint64_t chunk = std::min(opt_.transfer_bytes, m.bytes - m.issued);
        m.issued += chunk;
        ++m.in_flight;
        net_.start_transfer(m.src, m.dst, chunk, false, this, id);
    }
}

void MessageLayer::transfer_done(Network &net, std::uint32_t transfer, std::uint64_t tag) {
    const auto id = static_cast<std::uint32_t>(tag);
    Message &m = messages_[id];
    --m.in_flight;
    m.done += net.transfer(transfer).bytes;
    if (m.done < m.bytes || m.in_flight > 0) {
        pump(id);
        return;
    }
    if (net.in_window(m.posted)) latency_.add(net.now() - m.posted);
    ++messages_done_;
    bytes_done_ += m.bytes;
    const int src = m.src, dst = m.dst;
    --open_[static_cast<std::size_t>(src)];
    if (opt_.restricted) {
        send_busy_[static_cast<std::size_t>(src)] = 0;
        recv_busy_[static_cast<std::size_t>(dst)] = 0;
    }
    const Message copy = m;  // the listener may post messages (and grow messages_)
    if (listener_ != nullptr) listener_->message_done(net, id, copy);
    free_messages_.push_back(id);  // after the listener: its id is its own until then
    try_start_sender(src);
    if (opt_.restricted) try_start_receiver(dst);
}

}  // namespace sansim
