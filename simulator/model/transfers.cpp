// Transfers: started by a workload and queued on the initiator's NIC, their payload counted as
// it is delivered, and done (the workload told) once every packet has been answered.
#include <algorithm>

#include "model/network.hpp"

namespace sansim {

std::uint32_t Network::start_transfer(int initiator, int target, std::uint64_t bytes, bool read,
                                      TransferClient *client, std::uint64_t tag) {
    std::uint32_t id;
    if (free_transfers_.empty()) {
        transfers_.emplace_back();
        id = static_cast<std::uint32_t>(transfers_.size() - 1);
    } else {
        id = free_transfers_.back();
        free_transfers_.pop_back();
    }
    Transfer &t = transfers_[id];
    t = Transfer{};
    t.initiator = initiator;
    t.target = target;
    t.bytes = bytes;
    t.read = read;
    t.live = true;
    t.fabric = choose_fabric(initiator, target, read);
    if (!connects(t.fabric, initiator, target, read))  // workloads declare their pairs: a slip
        throw TopologyError(
            unreachable_pair(topo_, routing_, initiator, target, needs_return(read)));
    const auto mp = static_cast<std::uint64_t>(params_.max_payload);
    t.packets = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (bytes + mp - 1) / mp));
    t.queued = now_;
    t.client = client;
    t.tag = tag;
    t.counted = in_window(now_);
    if (t.counted) {
        ++stats_.window_transfers;
        ++stats_.window_live;
        stats_.payload_injected_window += bytes;
        stats_.series.add_injection(now_);
    }
    // Work arriving at an idle network starts the stall clock afresh.
    if (live_transfers_ == 0) progress();
    ++live_transfers_;
    log_pair(initiator, target);
    stats_.payload_injected += bytes;
    nics_[static_cast<std::size_t>(initiator)].queue_transfer(id);
    return id;
}

namespace {

void sort_unique(std::vector<std::uint64_t> &keys) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace

void Network::log_pair(int initiator, int target) {
    pair_log_.push_back(static_cast<std::uint64_t>(initiator) << 32 |
                        static_cast<std::uint32_t>(target));
    if (pair_log_.size() < pair_log_compact_at_) return;
    sort_unique(pair_log_);
    pair_log_compact_at_ = std::max(pair_log_compact_at_, 2 * pair_log_.size());
}

std::vector<std::pair<int, int>> Network::used_pairs() const {
    std::vector<std::uint64_t> keys = pair_log_;
    sort_unique(keys);
    std::vector<std::pair<int, int>> pairs;
    pairs.reserve(keys.size());
    for (std::uint64_t k : keys)
        pairs.emplace_back(static_cast<int>(k >> 32), static_cast<int>(k & 0xFFFFFFFFu));
    return pairs;
}

void Network::deliver(std::uint32_t pkt) {
    const Packet &p = packets_[pkt];
    Transfer &t = transfers_[p.transfer];
    t.delivered += p.payload;
    if (t.delivered > t.bytes) ++stats_.duplicate_deliveries;
    stats_.payload_delivered += p.payload;
    stats_.last_delivery = now_;
    stats_.series.add_bytes(now_, p.payload);
    const bool counted = in_window(now_);
    if (counted) stats_.payload_delivered_window += p.payload;
    nics_[static_cast<std::size_t>(p.dst)].count_received(p.payload, counted, now_);
    nics_[static_cast<std::size_t>(p.src)].count_sent(p.payload, counted, now_);
}

void Network::answered(std::uint32_t tid) {
    Transfer &t = transfers_[tid];
    if (++t.answered < t.packets) return;
    t.live = false;
    if (--live_transfers_ == 0) {
        stall_deadline_ = kForever;
        horizon_ = until_;
    }
    ++stats_.transfers_done;
    if (t.counted) {
        const Time latency = now_ - t.queued;
        stats_.transfer_latency.add(latency);
        nics_[static_cast<std::size_t>(t.initiator)].count_latency(latency);
        stats_.series.add_latency(t.queued, latency);
        // The window's work is done: nothing more to measure.
        if (--stats_.window_live == 0 && now_ >= window_.end) stop();
    }
    free_transfers_.push_back(tid);
    if (t.client != nullptr) t.client->transfer_done(*this, tid, t.tag);
}

}  // namespace sansim
