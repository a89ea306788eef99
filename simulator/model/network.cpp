// Links and routers. A packet is a train of symbols: its head may leave a router one hop
// latency after reaching the input FIFO while its tail is still arriving (wormhole
// pipelining). Flow control is per packet: a packet starts on a link only when the next input
// FIFO has room for all of it, and only the packet at the head of an input FIFO may request an
// output, so a packet blocked on a busy output holds up everything queued behind it.
#include "model/network.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace sansim {

const char *arbitration_name(Arbitration a) {
    return a == Arbitration::round_robin ? "round_robin" : "oldest_first";
}

const char *ack_path_name(AckPath a) {
    return a == AckPath::inband ? "inband" : a == AckPath::separate ? "separate" : "none";
}

const char *fabric_choice_name(FabricChoice f) {
    switch (f) {
        case FabricChoice::shortest:
            return "shortest";
        case FabricChoice::balance:
            return "balance";
        case FabricChoice::x_only:
            return "x";
        case FabricChoice::y_only:
            return "y";
    }
    return "?";
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
        case FabricChoice::x_only:
            return 0;
        case FabricChoice::y_only:
            return 1;
        case FabricChoice::balance:
            return (src + dst) % 2;
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
        if (deep_prefetch_) {
            if (const Event *far = queue_.ahead(3 * kLookahead)) prefetch(*far);
            if (const Event *mid = queue_.ahead(2 * kLookahead)) prefetch_held(*mid);
            if (const Event *soon = queue_.ahead(kLookahead)) prefetch_route(*soon);
        } else if (const Event *soon = queue_.ahead(kLookahead)) {
            prefetch_light(*soon);
        }
        dispatch(e);
    }
    if (queue_.empty() && live_transfers_ > 0) deadlocked_ = true;
}

// A fabric whose links fit in the caches: the channels and FIFO of an event a few places
// ahead, no more (the stages below would cost more than they save).
void Network::prefetch_light(const Event &e) const {
    switch (e.kind()) {
        case kHeadReady:
            __builtin_prefetch(&channels_[e.a]);
            __builtin_prefetch(fifo_ring(e.a));
            break;
        case kTailOut:
            __builtin_prefetch(&channels_[e.a]);
            if (e.b < channels_.size()) {
                __builtin_prefetch(&channels_[e.b]);
                __builtin_prefetch(fifo_ring(e.b));
            }
            break;
        case kNicRx:
            __builtin_prefetch(&packets_[e.b]);
            break;
        default:
            break;
    }
}

// On a large fabric most of what an event touches was last used microseconds of simulated
// time ago and has left the caches. The event queue knows what is coming, so fetching runs in
// three stages, each a few events nearer: first what an event names (its channels, FIFO ring,
// packet, waiting list); then what those hold (the packet at a FIFO's front, the route's entry
// in out_channel_); then the channel the packet will ask for. Each stage reads only what the
// one before started fetching, and everything it reads is a hint: the event may yet move.
void Network::prefetch(const Event &e) const {
    switch (e.kind()) {
        case kHeadReady:
            __builtin_prefetch(&channels_[e.a]);
            prefetch_ring(e.a);
            prefetch_packet(e.b);
            break;
        case kTailOut:
            __builtin_prefetch(&channels_[e.a]);
            __builtin_prefetch(waiters(std::size_t{e.a}));
            if (e.b < channels_.size()) {
                __builtin_prefetch(&channels_[e.b]);
                prefetch_ring(e.b);
                __builtin_prefetch(waiters(std::size_t{e.b}));
            }
            break;
        case kNicRx:
            prefetch_packet(e.b);
            prefetch_nic(e.a);
            break;
        default:
            if (e.kind() >= kPciDone && e.b < packets_.size()) {  // a disk burst names none
                prefetch_packet(e.b);
                prefetch_nic(e.a);
            }
            break;
    }
}

void Network::prefetch_nic(std::uint32_t node) const {
    const auto *at = reinterpret_cast<const char *>(&nics_[node]);
    for (std::size_t line = 0; line < sizeof(Nic); line += 64) __builtin_prefetch(at + line);
}

// The out_channel_ entry a packet at the front of router input `input` will be routed by.
const int *Network::route_entry(std::uint32_t input, std::uint32_t pkt) const {
    const Channel &in = channels_[input];
    const Packet &p = packets_[pkt];
    const int router = in.to_dev - topo_.nodes;
    if (router < 0 || valiant_) return nullptr;
    const std::uint16_t port = routing_.port(router, p.phase, p.dst);
    if (port == Routing::kNone) return nullptr;
    return &out_channel_[first_port_[static_cast<std::size_t>(in.to_dev)] + port];
}

// The packet behind the front of router input `input`'s FIFO, or kNil.
std::uint32_t Network::second_in_fifo(std::uint32_t input) const {
    const Channel &in = channels_[input];
    if (in.fifo_count < 2) return kNil;
    std::size_t slot = in.fifo_first + 1u;
    if (slot == fifo_stride_) slot = 0;
    return fifo_ring(input)[slot];
}

// Up to kWaitersFetched router inputs waiting for channel `out`, by calling `f` on each.
template <typename F>
void Network::for_waiting_inputs(std::uint32_t out, F f) const {
    const Channel &ch = channels_[out];
    const Waiter *w = waiters(std::size_t{out});
    const std::size_t n = std::min<std::size_t>(ch.waiting, kWaitersFetched);
    for (std::size_t i = 0; i < n; ++i)
        if (w[i].requester < channels_.size()) f(w[i]);
}

// The inputs a kTailOut event may let go: those waiting for the channel it frees, and, when
// the packet leaves a router input, those upstream waiting for room in that input's FIFO.
template <typename F>
void Network::for_inputs_freed(const Event &tail_out, F f) const {
    for_waiting_inputs(tail_out.a, f);
    if (tail_out.b < channels_.size()) for_waiting_inputs(tail_out.b & ~lane_mask_, f);
}

void Network::prefetch_held(const Event &e) const {
    if (e.kind() == kNicRx || e.kind() >= kPciDone) {
        // A NIC event ends in the packet's transfer, or in a packet sent on the NIC's link.
        if (e.b >= packets_.size()) return;
        const Packet &p = packets_[e.b];
        if (p.transfer < transfers_.size()) __builtin_prefetch(&transfers_[p.transfer]);
        const int out = nics_[e.a].port_out(p.fabric);
        if (out >= 0) __builtin_prefetch(&channels_[static_cast<std::size_t>(out)]);
    } else if (e.kind() == kHeadReady) {
        if (channels_[e.a].fifo_count != 0) return;  // else routed as soon as it lands
        if (const int *entry = route_entry(e.a, e.b)) __builtin_prefetch(entry);
    } else if (e.kind() == kTailOut) {
        // The packet leaving (its length is charged back) and the one behind it, routed next;
        // the inputs waiting for the channel it frees, one of which takes it.
        if (e.b < channels_.size() && channels_[e.b].fifo_count != 0) {
            prefetch_packet(fifo_front(e.b));
            if (const std::uint32_t next = second_in_fifo(e.b); next != kNil) prefetch_packet(next);
        }
        for_inputs_freed(e, [this](const Waiter &w) { prefetch_packet(w.pkt); });
    }
}

void Network::prefetch_route(const Event &e) const {
    if (e.kind() == kHeadReady) {
        if (channels_[e.a].fifo_count != 0) return;
        const int *entry = route_entry(e.a, e.b);
        if (entry == nullptr || *entry < 0) return;
        __builtin_prefetch(&channels_[static_cast<std::size_t>(*entry)]);
        __builtin_prefetch(waiters(static_cast<std::size_t>(*entry)));
    } else if (e.kind() == kTailOut) {
        if (e.b < channels_.size())
            if (const std::uint32_t next = second_in_fifo(e.b); next != kNil)
                if (const int *entry = route_entry(e.b, next)) __builtin_prefetch(entry);
    }
}

void Network::dispatch(const Event &e) {
    switch (e.kind()) {
        case kHeadReady:
            head_ready(static_cast<int>(e.a), e.b);
            break;
        case kTailOut:
            tail_out(static_cast<int>(e.a), e.b);
            break;
        case kNicRx:
            nics_[e.a].receive(e.b);
            break;
        case kTimer:
            clients_[e.a]->timer(*this, e.b);
            break;
        case kDisk:
            nics_[e.a].disk_burst();
            break;
        case kWindowEdge:
            window_edge(e.a != 0);
            break;
        case kCredit:
            credit_return(e.a, e.b);
            break;
        default:
            nics_[e.a].pci_done(static_cast<Nic::PciOp>(e.kind() - kPciDone), e.b);
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

void Network::free_packet(std::uint32_t p) {
    free_packets_.push_back(p);
}

// Requesters: a router input (the channel feeding it) or a NIC port (after the channels).
inline std::uint32_t Network::head_of(std::uint32_t requester) const {
    if (requester < channels_.size()) return fifo_front(requester);
    const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
    return nics_[k / 2].port_head(static_cast<int>(k % 2));
}

// Whether `bytes` fit in the buffer of lane `vl` at the far end of channel `out`.
inline bool Network::fits_lane(int out, std::uint32_t vl, std::uint32_t bytes) const {
    const Channel &lane = channels_[static_cast<std::size_t>(out) + vl];
    return !lane.into_router || lane.used + bytes <= lane.cap;
}

// Whether the packet fits in the buffer of its lane at the far end of channel `out`.
inline bool Network::fits(int out, std::uint32_t pkt) const {
    const Packet &p = packets_[pkt];
    return fits_lane(out, p.vl, charge(p.length));
}

// Whether a waiting list entry's head packet fits in its lane's buffer beyond channel `out`.
inline bool Network::waiter_fits(int out, const Waiter &w) const {
    if (w.requester >= channels_.size()) return fits(out, head_of(w.requester));
    return fits_lane(out, w.vl, w.bytes);
}

// Arbitration runs on every change that could let a waiter go (the channel freed, room
// downstream, credits back), so an idle channel's waiters never fit downstream: a newcomer
// to an idle channel goes at once if it fits, and waits otherwise, without the waiters being
// looked at again. Among waiters it would have been the only one to fit, so the round-robin
// pointer moves past it as arbitrate() would have moved it.
void Network::request(int out, std::uint32_t requester) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    const std::uint32_t pkt = head_of(requester);
    if (!ch.busy && fits(out, pkt)) {
        if (ch.waiting != 0) ch.rr = requester + 1;
        start(out, requester, pkt);
        return;
    }
    waiters(out)[ch.waiting++] = waiter_entry(requester, pkt);
}

void Network::arbitrate(int out) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    if (ch.busy || ch.waiting == 0) return;
    Waiter *const w = waiters(out);
    const std::size_t n = ch.waiting;
    std::size_t pick = n;
    if (params_.arbitration == Arbitration::oldest_first) {
        for (std::size_t i = 0; i < n; ++i)
            if (waiter_fits(out, w[i])) {
                pick = i;
                break;
            }
    } else {
        std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t i = 0; i < n; ++i) {
            // Wraps at 32 bits: round-robin order from rr.
            const std::uint64_t distance = w[i].requester - ch.rr;
            if (distance < best && waiter_fits(out, w[i])) {
                best = distance;
                pick = i;
            }
        }
    }
    if (pick == n) return;  // nobody fits in the next FIFO yet
    const Waiter chosen = w[pick];
    std::copy(w + pick + 1, w + n, w + pick);
    --ch.waiting;
    ch.rr = chosen.requester + 1;
    start(out, chosen.requester, waiter_packet(chosen));
}

void Network::start(int out, std::uint32_t requester, std::uint32_t pkt) {
    Channel &ch = channels_[static_cast<std::size_t>(out)];
    Packet &p = packets_[pkt];
    ch.busy = true;
    ch.busy_since = now_;
    ch.packets++;
    if (ch.into_router) channels_[static_cast<std::size_t>(out) + p.vl].used += charge(p.length);
    if (requester >= channels_.size()) {
        // NIC ports hand the packet over now; router inputs keep it until its tail leaves.
        const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
        nics_[k / 2].port_sent(static_cast<int>(k % 2), pkt, p.next);
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
        routing_.prefetch(ch.to_dev - topo_.nodes, p.phase, p.dst);
        queue_.push(now_ + ch.delay + hop_latency_, kHeadReady,
                    static_cast<std::uint32_t>(out) + p.vl, pkt);
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
        const std::uint32_t bytes = charge(packets_[pkt].length);
        if (credit_) {
            // The credits travel back over the link.
            occupancy_[requester] -= bytes;
            queue_.push(now_ + in.delay, kCredit, requester, bytes);
        } else {
            in.used -= bytes;
        }
        arbitrate(out);
        if (in.fifo_count > 0) route_head(requester);
        // Room in this FIFO for the upstream link.
        if (!credit_) arbitrate(static_cast<int>(requester & ~lane_mask_));
    } else {
        const std::uint32_t k = requester - static_cast<std::uint32_t>(channels_.size());
        nics_[k / 2].port_tail_out(static_cast<int>(k % 2));
    }
}

inline void Network::fifo_push(std::uint32_t chi, std::uint32_t pkt) {
    Channel &ch = channels_[chi];
    if (ch.fifo_count == fifo_stride_)  // flow control keeps it from happening
        throw std::logic_error("a router input FIFO overflowed its ring");
    std::size_t slot = ch.fifo_first + ch.fifo_count++;
    if (slot >= fifo_stride_) slot -= fifo_stride_;
    fifo_ring(chi)[slot] = pkt;
}

inline std::uint32_t Network::fifo_pop(std::uint32_t chi) {
    Channel &ch = channels_[chi];
    const std::uint32_t p = fifo_ring(chi)[ch.fifo_first];
    if (++ch.fifo_first == fifo_stride_) ch.fifo_first = 0;
    --ch.fifo_count;
    return p;
}

void Network::head_ready(int chi, std::uint32_t pkt) {
    const auto c = static_cast<std::uint32_t>(chi);
    fifo_push(c, pkt);
    if (credit_) {
        // What the buffer holds, counted apart from the sender's credits: they must keep it
        // within the buffer's size.
        std::uint32_t &held = occupancy_[c];
        held += charge(packets_[pkt].length);
        stats_.peak_buffer_bytes = std::max(stats_.peak_buffer_bytes, held);
        if (held > channels_[c].cap) ++stats_.buffer_overflows;
    }
    if (channels_[c].fifo_count == 1) route_head(c);
}

void Network::credit_return(std::uint32_t lane, std::uint32_t bytes) {
    channels_[lane].used -= bytes;
    arbitrate(static_cast<int>(lane & ~lane_mask_));
}

void Network::route_head(std::uint32_t input) {
    if (__builtin_expect(lane_routing_, 0)) {
        route_head_lanes(input);
        return;
    }
    const Channel &in = channels_[input];
    const Packet &p = packets_[fifo_front(input)];
    const int router = in.to_dev - topo_.nodes;
    const std::uint16_t port = routing_.port(router, p.phase, p.dst);
    request(out_channel(in.to_dev, port), input);
}

// route_head with more than one lane or Valiant's two legs.
void Network::route_head_lanes(std::uint32_t input) {
    const Channel &in = channels_[input];
    Packet &p = packets_[fifo_front(input)];
    const int router = in.to_dev - topo_.nodes;
    const std::uint16_t port =
        valiant_ ? via_port(router, fifo_front(input)) : routing_.port(router, p.phase, p.dst);
    const int out = out_channel(in.to_dev, port);
    // The lane rule: keep the lane within a class of links, step up where the link says.
    const Channel &o = channels_[static_cast<std::size_t>(out)];
    const std::uint32_t vl = (o.vl_class == in.vl_class ? input & lane_mask_ : 0) + o.vl_step;
    p.vl = static_cast<std::uint8_t>(
        std::min<std::uint32_t>(vl, static_cast<std::uint32_t>(lanes_ - 1)));
    request(out, input);
}

// Valiant's first leg aims at the intermediate node; at that node's router the second leg
// starts, minimal to the destination.
std::uint16_t Network::via_port(int router, std::uint32_t pkt) {
    Packet &p = packets_[pkt];
    std::int32_t &via = packet_via_[pkt];
    if (via < 0) return routing_.port(router, p.phase, p.dst);
    const std::uint16_t port = routing_.port(router, p.phase, via);
    if (channels_[static_cast<std::size_t>(out_channel(topo_.router_dev(router), port))]
            .into_router)
        return port;
    via = -1;
    p.phase = 0;
    return routing_.port(router, 0, p.dst);
}

// A packet leaving its NIC: its lane under the spread rule, and Valiant's intermediate node.
void Network::choose_lane_and_via(std::uint32_t pkt) {
    packets_[pkt].vl = spread_ ? static_cast<std::uint8_t>(packets_[pkt].dst % lanes_) : 0;
    if (valiant_) pick_via(pkt);
}

// A random group other than the source's and the destination's, and one of the nodes nearest
// the source's router in it; none (minimal routing) within a group.
void Network::pick_via(std::uint32_t pkt) {
    const Packet &p = packets_[pkt];
    if (packet_via_.size() < packets_.size()) packet_via_.resize(packets_.size());
    std::int32_t &via = packet_via_[pkt];
    via = -1;
    const PortPeer &at = routing_.peers[static_cast<std::size_t>(p.src)][p.fabric];
    const PortPeer &to = routing_.peers[static_cast<std::size_t>(p.dst)][p.fabric];
    if (topo_.is_node(at.dev) || topo_.is_node(to.dev)) return;
    const int u = at.dev - topo_.nodes;
    const int gs = via_.router_group[static_cast<std::size_t>(u)];
    const int gd = via_.router_group[static_cast<std::size_t>(to.dev - topo_.nodes)];
    if (gs == gd) return;
    auto draw = [this] {  // splitmix64
        std::uint64_t z = (route_rng_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    for (int tries = 0; tries < 64; ++tries) {
        const int g = static_cast<int>(draw() % static_cast<std::uint64_t>(via_.groups));
        const int n = g == gs || g == gd ? 0 : via_.candidates(u, g);
        if (n == 0) continue;
        via = via_.candidate(u, g, static_cast<int>(draw() % static_cast<std::uint64_t>(n)));
        return;
    }
}

}  // namespace sansim
