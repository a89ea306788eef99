// Building the network from a topology: parameter checks, one channel block per link
// direction (a channel per virtual lane), the lane rule's classes and steps, NICs, the stall
// time, disk DMA, and Valiant routing's intermediates.
#include <algorithm>
#include <bit>
#include <limits>

#include "model/network.hpp"

namespace sansim {

const char *flow_control_name(FlowControl f) {
    return f == FlowControl::packet ? "packet" : "credit";
}

Network::Network(const Topology &topo, const Params &params)
    : topo_(topo), params_(params), routing_(compute_routing(topo)) {
    if (params_.max_payload < 1 || params_.header_bytes < 1)
        throw TopologyError("packet payload and header must be at least one byte");
    if (params_.outstanding_limit < 1) throw TopologyError("outstanding limit must be >= 1");
    if (params_.bte_engines < 1) throw TopologyError("BTE engines must be >= 1");
    hop_latency_ = from_ns(params_.hop_latency_ns);
    turnaround_ = from_ns(params_.nic_turnaround_ns);
    setup_lanes();
    build_channels();
    nics_.reserve(static_cast<std::size_t>(topo_.nodes));
    for (int n = 0; n < topo_.nodes; ++n) {
        Nic &nic = nics_.emplace_back(*this, n);
        for (int f = 0; f < topo_.fabrics; ++f) nic.attach(f, out_channel(n, f));
    }
    stats_.series_bin = std::max<Time>(1, from_us(params_.series_bin_us));
    // Past a simulated hour the stall time could overflow the clock: never.
    if (params_.stall_us > 0 && params_.stall_us < 3.6e9)
        stall_ = std::max(from_us(params_.stall_us), 100 * slowest_hop());
    if (params_.disk_mbps > 0 && params_.pci_mbps > 0) {
        // Reads and writes each at disk_mbps: one burst every burst / (2 * rate).
        disk_interval_ = static_cast<Time>(params_.disk_burst_bytes / (2.0 * params_.disk_mbps) *
                                           static_cast<double>(kUs));
        for (int n = 0; n < topo_.nodes; ++n)
            queue_.push(disk_interval_ * n / std::max(1, topo_.nodes), kDisk,
                        static_cast<std::uint32_t>(n), 0);
    }
    setup_valiant();
}

// Lanes per link, their buffers and the flow control; the lane rule's needs.
void Network::setup_lanes() {
    const Params &p = params_;
    if (p.vls < 1 || p.vls > 16) throw TopologyError("virtual lanes: 1 to 16");
    if (p.credit_bytes < 1 || (p.credit_bytes & (p.credit_bytes - 1)) != 0 ||
        p.credit_bytes > 1 << 16)
        throw TopologyError("the credit unit must be a power of two up to 65536 bytes, not " +
                            std::to_string(p.credit_bytes));
    lanes_ = p.vls;
    while ((1 << lane_shift_) < lanes_) ++lane_shift_;
    lane_mask_ = (1u << lane_shift_) - 1;
    credit_ = p.flow_control == FlowControl::credit;
    spread_ = topo_.vl_rule == "spread";
    credit_round_ = credit_ ? static_cast<std::uint32_t>(p.credit_bytes) - 1 : 0;
    const int packet = p.max_payload + p.header_bytes;
    if (!credit_ && p.vl_buffer_bytes == 0 && p.fifo_bytes < packet)
        throw TopologyError("router FIFOs must hold one whole packet (" + std::to_string(packet) +
                            " bytes)");
    const int lane_bytes = p.vl_buffer_bytes > 0 ? p.vl_buffer_bytes : p.fifo_bytes;
    if (lane_bytes < static_cast<int>(charge(static_cast<std::uint32_t>(packet))))
        throw TopologyError(
            "virtual-lane buffers must hold one whole packet (" +
            std::to_string(charge(static_cast<std::uint32_t>(packet))) + " bytes" +
            (credit_ ? " in " + std::to_string(credit_round_ + 1) + "-byte credits" : "") +
            "), not " + std::to_string(lane_bytes));
    // Lanes the rule needs to be deadlock free: the dateline's two per ring; one per global
    // link of the longest path plus one (minimal dragonfly paths cross one, Valiant's two).
    int needed = 1;
    if (topo_.vl_rule == "dateline") needed = 2;
    if (topo_.vl_rule == "group") needed = topo_.routing == "valiant" ? 3 : 2;
    // Valiant's legs cross one link between groups each; the lanes only break the cycles if
    // nothing crosses more.
    if (lanes_ < needed)
        throw TopologyError(
            "virtual-lane rule '" + topo_.vl_rule + "'" +
            (topo_.vl_rule == "group" ? " with routing '" + topo_.routing + "'" : "") + " needs " +
            std::to_string(needed) + " virtual lanes (--vls " + std::to_string(needed) + "), not " +
            std::to_string(lanes_));
}

// Lane 0 of each block carries the link; every lane of it starts as a copy, with its own
// buffer. Lanes past lanes_ (blocks are powers of two) are never used.
void Network::build_channels() {
    const double default_mbps = params_.link_mbps > 0 ? params_.link_mbps : params_.symbol_mhz;
    const auto lane_bytes = static_cast<std::uint32_t>(
        params_.vl_buffer_bytes > 0 ? params_.vl_buffer_bytes : params_.fifo_bytes);
    first_port_.resize(static_cast<std::size_t>(topo_.devices()));
    std::uint32_t ports = 0;
    for (int d = 0; d < topo_.devices(); ++d) {
        first_port_[static_cast<std::size_t>(d)] = ports;
        ports += static_cast<std::uint32_t>(topo_.ports_of(d));
    }
    out_channel_.assign(ports, -1);
    // A lane's buffer holds at most one header-only packet per header's worth of bytes; an
    // output is wanted by at most every input lane of its router (or the one NIC port behind it).
    fifo_stride_ =
        static_cast<std::size_t>(lane_bytes) / static_cast<std::size_t>(params_.header_bytes);
    if (fifo_stride_ <= kSlotsPerLine) fifo_stride_ = std::bit_ceil(fifo_stride_);
    if (fifo_stride_ > 0xFFFF)
        throw TopologyError("router FIFOs may hold at most 65535 header-only packets");
    waiter_stride_ = 1;
    for (int d = topo_.nodes; d < topo_.devices(); ++d)
        waiter_stride_ = std::max(waiter_stride_, static_cast<std::size_t>(topo_.ports_of(d)) *
                                                      static_cast<std::size_t>(lanes_));
    const std::size_t block = std::size_t{1} << lane_shift_;
    for (const LinkSpec &l : topo_.links) {
        const double mbps = l.mbps > 0 ? l.mbps : default_mbps;
        const double delay = l.delay_ns >= 0 ? l.delay_ns : params_.link_delay_ns;
        if (!(mbps >= 0.001)) throw TopologyError("link bandwidth must be at least 0.001 MB/s");
        for (int dir = 0; dir < 2; ++dir) {
            const Endpoint from = dir == 0 ? l.a : l.b;
            const Endpoint to = dir == 0 ? l.b : l.a;
            Channel ch;
            ch.to_dev = to.dev;
            ch.ps_per_byte = static_cast<std::uint32_t>(ps_per_byte(mbps));
            ch.delay = from_ns(delay);
            ch.into_router = !topo_.is_node(to.dev);
            ch.cap = ch.into_router ? lane_bytes : std::numeric_limits<std::uint32_t>::max();
            if (!topo_.is_node(from.dev))
                ch.to_phase1 = routing_.to_phase1[static_cast<std::size_t>(from.dev - topo_.nodes)]
                                                 [static_cast<std::size_t>(from.port)];
            set_lane_rule(ch, l, from, to);
            out_channel_[first_port_[static_cast<std::size_t>(from.dev)] +
                         static_cast<std::size_t>(from.port)] = static_cast<int>(channels_.size());
            channels_.insert(channels_.end(), block, ch);
            channel_ends_.push_back(ChannelEnds{from.dev, from.port, to.dev, to.port});
        }
    }
    // A worm can sit in several FIFOs at once, so FIFOs are rings of packet ids rather than
    // links through the packets.
    fifo_slots_.assign(channels_.size() * fifo_stride_ + kSlotsPerLine, kNil);
    const auto first = reinterpret_cast<std::uintptr_t>(fifo_slots_.data());
    fifo_base_ = fifo_slots_.data() + ((64 - first % 64) % 64) / sizeof(std::uint32_t);
    waiter_slots_.assign(channel_ends_.size() * waiter_stride_, Waiter{});
    const std::size_t link_bytes = channels_.size() * sizeof(Channel) +
                                   fifo_slots_.size() * sizeof(std::uint32_t) +
                                   waiter_slots_.size() * sizeof(Waiter);
    deep_prefetch_ = params_.prefetch == Prefetch::deep ||
                     (params_.prefetch == Prefetch::automatic && link_bytes > kDeepPrefetchBytes);
    if (credit_) occupancy_.assign(channels_.size(), 0);
}

// dateline: links are classed by the dimension they move in (links to nodes are class 0) and
// a ring's wrap-around link steps to lane 1. group: links between groups step one lane up.
void Network::set_lane_rule(Channel &ch, const LinkSpec &l, Endpoint from, Endpoint to) const {
    if (topo_.is_node(from.dev) || topo_.is_node(to.dev)) return;
    const RouterSpec &u = topo_.routers[static_cast<std::size_t>(from.dev - topo_.nodes)];
    const RouterSpec &v = topo_.routers[static_cast<std::size_t>(to.dev - topo_.nodes)];
    if (topo_.vl_rule == "dateline") {
        // x: 1, y: 2, z: 4, a diagonal link its own class (3)
        ch.vl_class = u.x != v.x ? (u.y != v.y ? 3 : 1) : u.y != v.y ? 2 : 4;
        ch.vl_step = l.dateline ? 1 : 0;
    } else if (topo_.vl_rule == "group") {
        ch.vl_step = u.group != v.group ? 1 : 0;
    }
}

void Network::setup_valiant() {
    valiant_ = topo_.routing == "valiant";
    lane_routing_ = valiant_ || lanes_ > 1;
    if (!valiant_) return;
    via_ = valiant_intermediates(topo_, routing_);
    route_rng_ = params_.route_seed * 0x9E3779B97F4A7C15ULL;
}

}  // namespace sansim
