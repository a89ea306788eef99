// Links and routers. A packet is a train of symbols: its head may leave a router one hop
// latency after reaching the input FIFO while its tail is still arriving (wormhole
// pipelining). Flow control is per packet: a packet starts on a link only when the next input
// FIFO has room for all of it, and only the packet at the head of an input FIFO may request an
// output, so a packet blocked on a busy output holds up everything queued behind it.
#include "model/network.hpp"

#include <algorithm>
#include <limits>

namespace sansim {

const char *arbitration_name(Arbitration a) {
    return a == Arbitration::round_robin ? "round_robin" : "oldest_first";
}

const char *ack_path_name(AckPath a) {
    return a == AckPath::inband ? "inband" : a == AckPath::separate ? "separate" : "none";
}

const char *fabric_choice_name(FabricChoice f) {
    switch (f) {
        case FabricChoice::shortest: return "shortest";
        case FabricChoice::balance: return "balance";
        case FabricChoice::x_only: return "x";
        case FabricChoice::y_only: return "y";
    }
    return "?";
}

Network::Network(const Topology &topo, const Params &params)
    : topo_(topo), params_(params), routing_(compute_routing(topo)) {
    if (params_.max_payload < 1 || params_.header_bytes < 1)
        throw TopologyError("packet payload and header must be at least one byte");
    if (params_.fifo_bytes < params_.max_payload + params_.header_bytes)
        throw TopologyError("router FIFOs must hold one whole packet (" +
                            std::to_string(params_.max_payload + params_.header_bytes) +
                            " bytes)");
    if (params_.outstanding_limit < 1) throw TopologyError("outstanding limit must be >= 1");
    if (params_.bte_engines < 1) throw TopologyError("BTE engines must be >= 1");
    hop_latency_ = from_ns(params_.hop_latency_ns);
    turnaround_ = from_ns(params_.nic_turnaround_ns);
    const double default_mbps = params_.link_mbps > 0 ? params_.link_mbps : params_.symbol_mhz;

    first_port_.resize(static_cast<std::size_t>(topo_.devices()));
    std::uint32_t ports = 0;
    for (int d = 0; d < topo_.devices(); ++d) {
        first_port_[static_cast<std::size_t>(d)] = ports;
        ports += static_cast<std::uint32_t>(topo_.ports_of(d));
    }
    out_channel_.assign(ports, -1);
    // A FIFO holds at most one header-only packet per header's worth of bytes; an output is
    // wanted by at most every input of its router (or the one NIC port behind it).
    fifo_stride_ = static_cast<std::size_t>(params_.fifo_bytes / params_.header_bytes + 1);
    if (fifo_stride_ > 0xFFFF)
        throw TopologyError("router FIFOs may hold at most 65534 header-only packets");
    waiter_stride_ = 1;
    for (int d = topo_.nodes; d < topo_.devices(); ++d)
        waiter_stride_ = std::max(waiter_stride_, static_cast<std::size_t>(topo_.ports_of(d)));
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
            ch.cap = ch.into_router ? static_cast<std::uint32_t>(params_.fifo_bytes)
                                    : std::numeric_limits<std::uint32_t>::max();
            if (!topo_.is_node(from.dev))
                ch.to_phase1 = routing_.to_phase1[static_cast<std::size_t>(from.dev - topo_.nodes)]
                                                 [static_cast<std::size_t>(from.port)];
            out_channel_[first_port_[static_cast<std::size_t>(from.dev)] +
                         static_cast<std::size_t>(from.port)] = static_cast<int>(channels_.size());
            channels_.push_back(ch);
            channel_ends_.push_back(ChannelEnds{from.dev, from.port, to.dev, to.port});
        }
    }
    // A worm can sit in several FIFOs at once, so FIFOs are rings of packet ids rather than
    // links through the packets.
    fifo_slots_.assign(channels_.size() * fifo_stride_, kNil);
    waiter_slots_.assign(channels_.size() * waiter_stride_, kNil);
    nics_.resize(static_cast<std::size_t>(topo_.nodes));
    for (int n = 0; n < topo_.nodes; ++n)
        for (int f = 0; f < topo_.fabrics; ++f) {
            NicPort &p = nics_[static_cast<std::size_t>(n)].port[f];
            p.out = out_channel(n, f);
            p.resp_head = p.resp_tail = p.req_head = p.req_tail = kNil;
        }
    for (Nic &nic : nics_)
        for (NicPort &p : nic.port) p.resp_head = p.resp_tail = p.req_head = p.req_tail = kNil;
    stats_.series_bin = std::max<Time>(1, from_us(params_.series_bin_us));
    pair_used_.assign(static_cast<std::size_t>(topo_.nodes) * static_cast<std::size_t>(topo_.nodes),
                      0);
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
}

Time Network::payload_time(int bytes) const {
    const double mbps = params_.link_mbps > 0 ? params_.link_mbps : params_.symbol_mhz;
    return ps_per_byte(mbps) * bytes;
}

int Network::choose_fabric(int src, int dst, bool read) const {
    if (topo_.fabrics == 1) return 0;
    const int hx = routing_.hop_count(0, src, dst);
    const int hy = routing_.hop_count(1, src, dst);
    if (!connects(0, src, dst, read)) return 1;
    if (!connects(1, src, dst, read)) return 0;
    switch (params_.fabric_choice) {
        case FabricChoice::x_only: return 0;
        case FabricChoice::y_only: return 1;
        case FabricChoice::balance: return (src + dst) % 2;
        case FabricChoice::shortest:
            if (hx != hy) return hx < hy ? 0 : 1;
            return (src + dst) % 2;
    }
    return 0;
}

void Network::schedule_timer(Time at, TransferClient *client, std::uint32_t arg) {
    auto it = std::find(clients_.begin(), clients_.end(), client);
    if (it == clients_.end()) it = clients_.insert(clients_.end(), client);
    queue_.push(std::max(at, now_), kTimer, static_cast<std::uint32_t>(it - clients_.begin()), arg);
}

void Network::run(Time until) {
    until_ = until;
    horizon_ = std::min(until_, stall_deadline_);
    while (!queue_.empty() && !stopped_) {
        const Time next = queue_.top().time;
        if (next > horizon_) {
            if (std::min(next, until) > stall_deadline_) {
                declare_stall();
                return;
            }
            now_ = until;
            return;
        }
        const Event e = queue_.pop();
        now_ = e.time;
        ++stats_.events;
        if (const Event *soon = queue_.ahead(kLookahead)) prefetch(*soon);
        dispatch(e);
    }
    if (queue_.empty() && live_transfers_ > 0) deadlocked_ = true;
}

// On a large fabric most of what an event touches was last used microseconds of simulated
// time ago and has left the caches; the event queue knows what is coming, so start fetching
// the channel, FIFO and packet of an event a few places ahead.
void Network::prefetch(const Event &e) const {
    switch (e.kind()) {
        case kHeadReady:
            __builtin_prefetch(&channels_[e.a]);
            __builtin_prefetch(&fifo_slots_[e.a * fifo_stride_]);
            break;
        case kTailOut:
            __builtin_prefetch(&channels_[e.a]);
            if (e.b < channels_.size()) {
                __builtin_prefetch(&channels_[e.b]);
                __builtin_prefetch(&fifo_slots_[e.b * fifo_stride_]);
            }
            break;
        case kNicRx: __builtin_prefetch(&packets_[e.b]); break;
        default: break;
    }
}

void Network::dispatch(const Event &e) {
    switch (e.kind()) {
        case kHeadReady: head_ready(static_cast<int>(e.a), e.b); break;
        case kTailOut: tail_out(static_cast<int>(e.a), e.b); break;
        case kNicRx: nic_receive(static_cast<int>(e.a), e.b); break;
        case kTimer: clients_[e.a]->timer(*this, e.b); break;
        case kDisk: disk_burst(static_cast<int>(e.a)); break;
        case kWindowEdge: window_edge(e.a != 0); break;
        default:
            pci_done(static_cast<int>(e.a), static_cast<PciOp>(e.kind() - kPciDone), e.b);
            break;
    }
}

std::uint32_t Network::alloc_packet() {
    if (free_packets_.empty()) {
        packets_.emplace_back();
        return static_cast<std::uint32_t>(packets_.size() - 1);
    }
    const std::uint32_t p = free_packets_.back();
    free_packets_.pop_back();
    packets_[p] = Packet{};
    return p;
}

void Network::free_packet(std::uint32_t p) { free_packets_.push_back(p); }

// Requesters: a router input (the channel feeding it) or a NIC port (after the channels).
inline std::uint32_t Network::head_of(std::uint32_t requester) const {
    if (requester < channels_.size()) return fifo_front(requester);
    const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
    const NicPort &p = nics_[k / 2].port[k % 2];
    return p.resp_head != kNil ? p.resp_head : p.req_head;
}

inline bool Network::fits(const Channel &ch, std::uint32_t pkt) const {
    return !ch.into_router || ch.used + packets_[pkt].length <= ch.cap;
}

void Network::request(int out, std::uint32_t requester) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    const std::uint32_t pkt = head_of(requester);
    if (!ch.busy && ch.waiting == 0 && fits(ch, pkt)) {
        start(out, requester, pkt);
        return;
    }
    waiters(out)[ch.waiting++] = requester;
    arbitrate(out);
}

void Network::arbitrate(int out) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    if (ch.busy || ch.waiting == 0) return;
    std::uint32_t *const w = waiters(out);
    const std::size_t n = ch.waiting;
    std::size_t pick = n;
    if (params_.arbitration == Arbitration::oldest_first) {
        for (std::size_t i = 0; i < n; ++i)
            if (fits(ch, head_of(w[i]))) {
                pick = i;
                break;
            }
    } else {
        std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t distance = w[i] - ch.rr;  // wraps: round-robin order
            if (distance < best && fits(ch, head_of(w[i]))) {
                best = distance;
                pick = i;
            }
        }
    }
    if (pick == n) return;  // nobody fits in the next FIFO yet
    const std::uint32_t requester = w[pick];
    std::copy(w + pick + 1, w + n, w + pick);
    --ch.waiting;
    ch.rr = requester + 1;
    start(out, requester, head_of(requester));
}

void Network::start(int out, std::uint32_t requester, std::uint32_t pkt) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    Packet &p = packets_[pkt];
    ch.busy = true;
    ch.busy_since = now_;
    ch.packets++;
    if (ch.into_router) ch.used += p.length;
    if (requester >= channels_.size()) {
        // NIC ports hand the packet over now; router inputs keep it until its tail leaves.
        const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
        NicPort &np = nics_[k / 2].port[k % 2];
        if (np.resp_head == pkt) {
            np.resp_head = p.next;
            if (np.resp_head == kNil) np.resp_tail = kNil;
        } else {
            np.req_head = p.next;
            if (np.req_head == kNil) np.req_tail = kNil;
        }
        p.tail_at = now_;
        ++stats_.packets_sent;
        if (stats_.first_injection < 0) stats_.first_injection = now_;
    }
    p.phase |= ch.to_phase1;
    const Time tail = std::max(now_ + static_cast<Time>(ch.ps_per_byte) * p.length, p.tail_at);
    p.tail_at = tail + ch.delay;
    queue_.push(tail, kTailOut, static_cast<std::uint32_t>(out), requester);
    if (ch.into_router) {
        // The next router looks the packet up when its head arrives, a hop latency from now;
        // on large fabrics the tables are far bigger than the caches, so fetch it meanwhile.
        __builtin_prefetch(routing_.entry(ch.to_dev - topo_.nodes, p.phase, p.dst));
        queue_.push(now_ + ch.delay + hop_latency_, kHeadReady, static_cast<std::uint32_t>(out),
                    pkt);
    } else {
        queue_.push(p.tail_at, kNicRx, static_cast<std::uint32_t>(ch.to_dev), pkt);
    }
}

void Network::tail_out(int out, std::uint32_t requester) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    ch.busy = false;
    ch.busy_total += now_ - ch.busy_since;
    if (requester < channels_.size()) {
        const std::uint32_t pkt = fifo_pop(requester);
        Channel &in = channels_[requester];
        in.used -= packets_[pkt].length;
        arbitrate(out);
        if (in.fifo_count > 0) route_head(requester);
        arbitrate(static_cast<int>(requester));  // room in this FIFO for the upstream link
    } else {
        const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
        NicPort &np = nics_[k / 2].port[k % 2];
        np.requesting = false;
        arbitrate(out);
        if (head_of(requester) != kNil) {
            np.requesting = true;
            request(out, requester);
        }
    }
}

inline void Network::fifo_push(std::uint32_t chi, std::uint32_t pkt) {
    Channel &ch = channels_[chi];
    std::size_t slot = ch.fifo_first + ch.fifo_count++;
    if (slot >= fifo_stride_) slot -= fifo_stride_;
    fifo_slots_[chi * fifo_stride_ + slot] = pkt;
}

inline std::uint32_t Network::fifo_pop(std::uint32_t chi) {
    Channel &ch = channels_[chi];
    const std::uint32_t p = fifo_slots_[chi * fifo_stride_ + ch.fifo_first];
    if (++ch.fifo_first == fifo_stride_) ch.fifo_first = 0;
    --ch.fifo_count;
    return p;
}

void Network::head_ready(int chi, std::uint32_t pkt) {
    const auto c = static_cast<std::uint32_t>(chi);
    fifo_push(c, pkt);
    if (channels_[c].fifo_count == 1) route_head(c);
}

void Network::route_head(std::uint32_t input) {
    const Channel &in = channels_[input];
    const Packet &p = packets_[fifo_front(input)];
    const int router = in.to_dev - topo_.nodes;
    const std::uint16_t port = routing_.port(router, p.phase, p.dst);
    request(out_channel(in.to_dev, port), input);
}

}  // namespace sansim
