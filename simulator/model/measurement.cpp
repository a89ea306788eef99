// What the statistics need beyond counting: the measurement window's edges (snapshots of the
// busy times, the stop once the window's work is done), the exhaustion time series, closing
// open intervals at the end, stall detection and the figures a report divides by (injection
// capacity).
#include <algorithm>

#include "model/network.hpp"

namespace sansim {

void Network::set_window(Time begin, Time end) {
    window_.begin = std::max<Time>(0, begin);
    window_.end = std::max(window_.begin, end);
    window_.given = true;
    queue_.push(window_.begin, kWindowEdge, 0, 0);
    if (window_.end != kForever) queue_.push(window_.end, kWindowEdge, 1, 0);
}

void Network::window_edge(bool end) {
    if (!end) {
        stats_.window_start = snapshot();
        return;
    }
    stats_.window_stop = snapshot();
    if (stats_.window_live == 0) stop();
}

Snapshot Network::snapshot() const {
    Snapshot s;
    s.taken = true;
    s.at = now_;
    s.channel_busy.reserve(link_channels());
    for (std::size_t i = 0; i < link_channels(); ++i) {
        const Channel &ch = link_channel(i);
        s.channel_busy.push_back(ch.busy_total + (ch.busy ? now_ - ch.busy_since : 0));
    }
    for (const Nic &nic : nics_) {
        s.nic_exhausted.push_back(nic.exhausted_until(now_));
        s.nic_pci.push_back(nic.pci_busy_until(now_));
    }
    return s;
}

// Exhausted NIC-time per bin of the time series, summed over the NICs.
void Network::add_exhausted(Time from, Time to) {
    const Time bin = stats_.series_bin;
    while (from < to) {
        const auto i = static_cast<std::size_t>(from / bin);
        if (i >= stats_.or_series.size()) stats_.or_series.resize(i + 1, 0);
        const Time end = std::min(to, static_cast<Time>(i + 1) * bin);
        stats_.or_series[i] += end - from;
        from = end;
    }
}

void Network::finish_statistics() {
    for (Nic &nic : nics_) nic.close_exhaustion();
    for (Channel &ch : channels_)
        if (ch.busy) {
            ch.busy_total += now_ - ch.busy_since;
            ch.busy_since = now_;
        }
    const auto bins = static_cast<std::size_t>((now_ + stats_.series_bin - 1) / stats_.series_bin);
    if (stats_.or_series.size() < bins) stats_.or_series.resize(bins, 0);
}

// Packets sitting in router FIFOs while no link moves anything can never move again: every
// packet waits for room that only another waiting packet could free.
void Network::declare_stall() {
    stalled_ = true;
    now_ = stats_.last_progress + stall_;
    bool moving = false, held = false;
    for (const Channel &ch : channels_) {
        moving |= ch.busy;
        held |= ch.fifo_count > 0;
    }
    deadlocked_ = held && !moving;
}

// The longest a packet can take to cross one link and router (or the PCI bus) unhindered.
Time Network::slowest_hop() const {
    const int bytes = params_.max_payload + params_.header_bytes;
    Time worst = 0;
    for (const Channel &ch : channels_)
        worst =
            std::max(worst, static_cast<Time>(ch.ps_per_byte) * bytes + ch.delay + hop_latency_);
    if (params_.pci_mbps > 0)  // a read and a write of one payload
        worst =
            std::max(worst, from_ns(params_.pci_read_latency_ns + params_.pci_write_overhead_ns +
                                    2e3 * params_.max_payload / params_.pci_mbps));
    return std::max(worst, turnaround_);
}

double Network::injection_capacity_mbps(int node) const {
    const double share =
        static_cast<double>(params_.max_payload) / (params_.max_payload + params_.header_bytes);
    double mbps = 0;
    for (int f = 0; f < topo_.fabrics; ++f) {
        const Channel &ch = channels_[static_cast<std::size_t>(out_channel(node, f))];
        mbps += 1e6 / ch.ps_per_byte * share;  // bytes per microsecond
    }
    return mbps;
}

}  // namespace sansim
