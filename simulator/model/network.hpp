// The packet-level network: links (one Channel per direction), wormhole routers with input
// FIFOs and output arbitration, and a NIC per node (model/nic.hpp) that it owns and calls into.
// Workloads drive it through transfers and timers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/histogram.hpp"
#include "engine/time.hpp"
#include "engine/time_series.hpp"
#include "model/nic.hpp"
#include "model/params.hpp"
#include "topology/routing.hpp"
#include "topology/topology.hpp"
#include "topology/valiant.hpp"

namespace sansim {

class Network;

// Receives completions of the transfers it started and the timers it set.
class TransferClient {
  public:
    virtual ~TransferClient() = default;
    virtual void transfer_done(Network &net, std::uint32_t transfer, std::uint64_t tag) = 0;
    virtual void timer(Network &, std::uint32_t) {}
};

enum class PacketKind : std::uint8_t { write_request, read_request, write_response, read_response };

struct Packet {
    Time tail_at = 0;  // when the tail reaches the current device
    Time created = 0;  // requests: when queued at the initiating NIC (start of RTT)
    Time issued = 0;   // when the BTE took an outstanding-request slot for it
    std::uint32_t transfer = 0;
    std::uint32_t next = 0;  // intrusive queue link
    std::int32_t src = 0, dst = 0;
    std::uint16_t length = 0, payload = 0;
    PacketKind kind = PacketKind::write_request;
    std::uint8_t fabric = 0, phase = 0;
    std::uint8_t vl = 0;  // the virtual lane it takes on its next link
};

struct Transfer {
    int initiator = 0, target = 0;
    std::uint64_t bytes = 0, delivered = 0;
    bool read = false, live = false;
    bool counted = false;  // queued inside the measurement window: its statistics count
    int fabric = 0;
    std::uint32_t packets = 0, issued = 0, answered = 0;
    Time queued = 0;
    TransferClient *client = nullptr;
    std::uint64_t tag = 0;
};

// One direction of a link and, when it leads into a router, that router's input FIFO. What a
// packet's start, tail and arbitration touch fits one cache line: on a 1,024-node fabric the
// channels far outgrow the caches. The FIFO's ring of packet ids and the list of requesters
// waiting for the channel live in pools beside it (Network::fifo_slots_, waiter_slots_).
// With virtual lanes a link direction has a block of these, one per lane, lane 0 first: the
// lane's buffer (cap, used, FIFO) is its own; the link's state (busy, its times, the waiting
// requesters) is kept on lane 0 only. One lane: the block is the channel.
struct alignas(64) Channel {
    Time delay = 0;
    Time busy_since = 0, busy_total = 0;
    std::uint64_t packets = 0;
    std::uint32_t ps_per_byte = 0;
    std::int32_t to_dev = 0;
    std::uint32_t cap = 0, used = 0;  // downstream input FIFO, bytes
    std::uint32_t rr = 0;             // round-robin arbitration: next requester to favour
    std::uint16_t waiting = 0;        // requesters whose head packet wants this channel
    std::uint16_t fifo_first = 0, fifo_count = 0;  // packets in the downstream FIFO
    bool busy = false;
    bool into_router = false;
    std::uint8_t to_phase1 = 0;
    // The lane rule: a packet keeps its lane while the class stays the same (0 on turning
    // into another class) and adds the step of the link it takes.
    std::uint8_t vl_class = 0, vl_step = 0;
};

static_assert(sizeof(Channel) == 64, "a channel should fill one cache line");

// Where a link direction runs, for reports.
struct ChannelEnds {
    int from_dev = 0, from_port = 0, to_dev = 0, to_port = 0;
};

constexpr Time kForever = std::numeric_limits<Time>::max();

// Statistics count packets and transfers injected in [begin, end) and deliveries made in it;
// without a window given, that is the whole run.
struct Window {
    Time begin = 0, end = kForever;
    bool given = false;
};

// Busy times at an instant, open intervals included: link channels, NIC exhaustion, PCI.
struct Snapshot {
    bool taken = false;
    Time at = 0;
    std::vector<Time> channel_busy, nic_exhausted, nic_pci;
};

struct NetworkStats {
    std::uint64_t events = 0;
    std::uint64_t packets_sent = 0;       // every packet injected by a NIC
    std::uint64_t payload_injected = 0;   // bytes of transfers started
    std::uint64_t payload_delivered = 0;  // bytes that reached their destination
    std::uint64_t duplicate_deliveries = 0;
    std::uint64_t transfers_done = 0;
    Histogram packet_rtt;         // request queued at the NIC port to response received
    Histogram request_rtt;        // slot taken by the BTE (its PCI read included) to response
    Histogram transfer_latency;   // queued at the BTE to last response
    TimeSeries series;            // deliveries and transfer latencies over time
    std::vector<Time> or_series;  // exhausted NIC-time per bin, summed over NICs
    Time series_bin = 0;
    Time first_injection = -1, last_delivery = 0;
    // Credit flow control: packets that found their lane's buffer fuller than its size on
    // arrival (never, if credits work), and the most any lane's buffer held.
    std::uint64_t buffer_overflows = 0;
    std::uint32_t peak_buffer_bytes = 0;
    std::uint64_t payload_delivered_window = 0;
    std::uint64_t payload_injected_window = 0;  // bytes of the transfers queued in the window
    std::uint64_t window_transfers = 0, window_live = 0;  // queued in the window; not yet done
    // The last packet to reach a NIC, or work arriving at an idle network: a run whose
    // pending work sees no progress for the stall time is stopped.
    Time last_progress = 0;
    Snapshot window_start, window_stop;
};

class Network {
  public:
    Network(const Topology &topo, const Params &params);
    // Its NICs keep a pointer to it.
    Network(const Network &) = delete;
    Network &operator=(const Network &) = delete;

    const Topology &topology() const { return topo_; }
    const Routing &routing() const { return routing_; }
    const Params &params() const { return params_; }
    int nodes() const { return topo_.nodes; }
    Time now() const { return now_; }

    // Queues a transfer on the initiator's BTE. A write moves `bytes` from initiator to
    // target in write requests; a read moves them back in read responses.
    std::uint32_t start_transfer(int initiator, int target, std::uint64_t bytes, bool read,
                                 TransferClient *client, std::uint64_t tag);
    const Transfer &transfer(std::uint32_t id) const { return transfers_[id]; }
    void schedule_timer(Time at, TransferClient *client, std::uint32_t arg);
    // The fabric a transfer from src to dst takes: one that connects them, and back when its
    // responses travel on the fabric (reads always; writes with in-band acknowledgements).
    int choose_fabric(int src, int dst, bool read = false) const;
    bool connects(int fabric, int src, int dst, bool read) const {
        return routing_.hop_count(fabric, src, dst) != Routing::kUnreachable &&
               (!needs_return(read) ||
                routing_.hop_count(fabric, dst, src) != Routing::kUnreachable);
    }
    bool needs_return(bool read) const { return read || params_.acks == AckPath::inband; }
    // Payload MB/s a node's links can inject (all its fabrics, headers taken off).
    double injection_capacity_mbps(int node) const;
    // Pairs that ever carried a transfer, by source and then destination.
    std::vector<std::pair<int, int>> used_pairs() const;

    // The measurement window (set before the run). Once it has ended and every transfer
    // queued in it is done, the run stops.
    void set_window(Time begin, Time end);
    const Window &window() const { return window_; }
    bool in_window(Time t) const { return t >= window_.begin && t < window_.end; }

    // Runs until the queue drains, stop() is called, or simulated time passes `until`.
    void run(Time until);
    void stop() { stopped_ = true; }
    bool stopped() const { return stopped_; }
    // Transfers queued or in flight; non-zero after run() with an empty queue is a deadlock.
    std::uint64_t live_transfers() const { return live_transfers_; }
    bool deadlocked() const { return deadlocked_; }
    // No packet reached a NIC for stall_time() with transfers pending; the run was stopped
    // then. deadlocked() as well when packets sat in router FIFOs with every link idle.
    bool stalled() const { return stalled_; }
    Time stall_time() const { return stall_; }
    // Busy times now, open intervals included.
    Snapshot snapshot() const;
    // Closes open exhaustion intervals so statistics cover [0, now].
    void finish_statistics();

    NetworkStats &stats() { return stats_; }
    const NetworkStats &stats() const { return stats_; }
    // Link directions (one per ChannelEnds) and their state: channel(i) is lane 0 of the i-th.
    std::size_t link_channels() const { return channel_ends_.size(); }
    const Channel &link_channel(std::size_t i) const { return channels_[i << lane_shift_]; }
    const std::vector<ChannelEnds> &channel_ends() const { return channel_ends_; }
    int lanes() const { return lanes_; }
    // Bytes a packet takes of a lane's buffer: its length, in whole credits under credit flow
    // control.
    std::uint32_t charge(std::uint32_t length) const {
        return (length + credit_round_) & ~credit_round_;
    }
    const std::vector<Nic> &nics() const { return nics_; }
    Time payload_time(int bytes) const;

  private:
    // The NICs' behaviour works on the packets, transfers, events and statistics kept here.
    friend class Nic;

    // The end of a PCI transaction is event kind kPciDone + its Nic::PciOp.
    enum EventKind : std::uint32_t {
        kHeadReady,
        kTailOut,
        kNicRx,
        kTimer,
        kDisk,
        kWindowEdge,
        kCredit,
        kPciDone
    };
    static constexpr std::uint32_t pci_event(Nic::PciOp op) {
        return static_cast<std::uint32_t>(kPciDone) + static_cast<std::uint32_t>(op);
    }

    static constexpr std::size_t kLookahead = 6;  // events between prefetch stages
    // Links (channels, FIFO rings, waiting lists) over this many bytes outgrow the caches:
    // the event loop then fetches ahead in three stages.
    static constexpr std::size_t kDeepPrefetchBytes = std::size_t{32} << 20;
    bool deep_prefetch_ = false;
    void dispatch(const Event &e);
    void prefetch(const Event &e) const;
    void prefetch_light(const Event &e) const;
    void prefetch_held(const Event &e) const;
    void prefetch_route(const Event &e) const;
    const int *route_entry(std::uint32_t input, std::uint32_t pkt) const;
    std::uint32_t second_in_fifo(std::uint32_t input) const;
    static constexpr std::size_t kWaitersFetched = 4;
    template <typename F>
    void for_waiting_inputs(std::uint32_t out, F f) const;
    template <typename F>
    void for_inputs_freed(const Event &tail_out, F f) const;
    // Channel c's FIFO ring: one cache line where rings are 16 slots or fewer, else both ends.
    void prefetch_ring(std::uint32_t c) const {
        const std::uint32_t *ring = fifo_ring(c);
        __builtin_prefetch(ring);
        if (fifo_stride_ > kSlotsPerLine) __builtin_prefetch(ring + fifo_stride_ - 1);
    }
    void prefetch_nic(std::uint32_t node) const;
    // A packet is 48 bytes, so every other one straddles two cache lines: fetch both.
    void prefetch_packet(std::uint32_t pkt) const {
        const auto *at = reinterpret_cast<const char *>(&packets_[pkt]);
        __builtin_prefetch(at);
        __builtin_prefetch(at + sizeof(Packet) - 1);
    }
    std::uint32_t alloc_packet();
    void free_packet(std::uint32_t p);
    std::uint32_t head_of(std::uint32_t requester) const;
    void request(int out, std::uint32_t requester);
    void arbitrate(int out);
    bool fits_lane(int out, std::uint32_t vl, std::uint32_t bytes) const;
    bool fits(int out, std::uint32_t pkt) const;
    void start(int out, std::uint32_t requester, std::uint32_t pkt);
    void tail_out(int out, std::uint32_t requester);
    void route_head(std::uint32_t input);
    void route_head_lanes(std::uint32_t input);
    std::uint16_t via_port(int router, std::uint32_t pkt);
    void head_ready(int ch, std::uint32_t pkt);
    void credit_return(std::uint32_t lane, std::uint32_t bytes);
    void setup_lanes();
    void build_channels();
    void set_lane_rule(Channel &ch, const LinkSpec &l, Endpoint from, Endpoint to) const;
    void setup_valiant();
    void pick_via(std::uint32_t pkt);
    std::uint32_t fifo_front(std::uint32_t ch) const {
        const Channel &c = channels_[ch];
        return c.fifo_count ? fifo_ring(ch)[c.fifo_first] : kNil;
    }
    void fifo_push(std::uint32_t ch, std::uint32_t pkt);
    std::uint32_t fifo_pop(std::uint32_t ch);
    // A waiting list's entry. A router input's head packet cannot change while it waits, so
    // the entry keeps it and what it needs downstream (its lane, the bytes it takes of that
    // lane's buffer): arbitration reads no input's FIFO or packet, only the list and the
    // channel's lanes, and the input let go brings its packet. A NIC port's head can change
    // while it waits (a response goes before the queued requests), so it is looked up.
    struct Waiter {
        std::uint32_t requester = 0, pkt = 0, bytes = 0, vl = 0;
    };
    Waiter *waiters(int ch) {
        return &waiter_slots_[(static_cast<std::size_t>(ch) >> lane_shift_) * waiter_stride_];
    }
    const Waiter *waiters(std::size_t ch) const {
        return &waiter_slots_[(ch >> lane_shift_) * waiter_stride_];
    }
    Waiter waiter_entry(std::uint32_t requester, std::uint32_t pkt) const {
        const Packet &p = packets_[pkt];
        return {requester, pkt, charge(p.length), p.vl};
    }
    bool waiter_fits(int out, const Waiter &w) const;
    std::uint32_t waiter_packet(const Waiter &w) const {
        return w.requester < channels_.size() ? w.pkt : head_of(w.requester);
    }
    int out_channel(int dev, int port) const {
        return out_channel_[first_port_[static_cast<std::size_t>(dev)] +
                            static_cast<std::size_t>(port)];
    }
    // NIC port `fabric` of node `nic` as a requester of its link: numbered after the channels.
    std::uint32_t nic_requester(int nic, int fabric) const {
        return static_cast<std::uint32_t>(channels_.size()) + static_cast<std::uint32_t>(nic) * 2 +
               static_cast<std::uint32_t>(fabric);
    }
    void choose_lane_and_via(std::uint32_t pkt);
    void deliver(std::uint32_t pkt);
    void answered(std::uint32_t transfer);
    void add_exhausted(Time from, Time to);
    void window_edge(bool end);
    void declare_stall();
    void progress() {
        stats_.last_progress = now_;
        stall_deadline_ = stall_ == kForever ? kForever : now_ + stall_;
        horizon_ = std::min(until_, stall_deadline_);
    }
    Time slowest_hop() const;

    Topology topo_;
    Params params_;
    Routing routing_;
    EventQueue queue_;
    Time now_ = 0;
    bool stopped_ = false, deadlocked_ = false, stalled_ = false;
    Time stall_ = kForever;
    // last_progress + stall_ while transfers are pending, else never; the run loop compares
    // each event's time with the earlier of it and the time limit, once.
    Time stall_deadline_ = kForever;
    Time until_ = kForever, horizon_ = kForever;
    Window window_;
    // Pairs that carried a transfer, src << 32 | dst: appended as transfers start, and sorted
    // and made unique each time the log doubles, so it holds about as many as the traffic
    // used, not nodes^2. A set looked up per transfer cost a tenth of a 65,536-node run's
    // event loop in cache misses.
    std::vector<std::uint64_t> pair_log_;
    std::size_t pair_log_compact_at_ = std::size_t{1} << 16;
    void log_pair(int initiator, int target);

    // Lanes: lanes_ per link direction in blocks of 2^lane_shift_ channels.
    int lanes_ = 1;
    unsigned lane_shift_ = 0;
    std::uint32_t lane_mask_ = 0;
    bool credit_ = false;
    bool spread_ = false;             // the spread lane rule: a packet's lane is chosen at its NIC
    bool lane_routing_ = false;       // more than one lane, or Valiant: route_head_lanes
    std::uint32_t credit_round_ = 0;  // the credit unit (a power of two) less one; 0: none
    std::vector<std::uint32_t> occupancy_;  // credit flow control: bytes in each lane's buffer
    // Valiant routing: per source router and group, the intermediate nodes to aim at, and the
    // one each packet's first leg aims at (-1 once there): kept beside the packets, which
    // other routing leaves at 48 bytes.
    bool valiant_ = false;
    Intermediates via_;
    std::vector<std::int32_t> packet_via_;
    std::uint64_t route_rng_ = 0;

    std::vector<Channel> channels_;
    std::vector<ChannelEnds> channel_ends_;
    // Channel c's ring: fifo_stride_ slots from fifo_ring(c). Rings of up to 16 slots are a
    // power of two long and start on a cache line, so none straddles two.
    static constexpr std::size_t kSlotsPerLine = 64 / sizeof(std::uint32_t);
    std::vector<std::uint32_t> fifo_slots_;
    std::uint32_t *fifo_base_ = nullptr;  // in fifo_slots_, on a cache line
    std::uint32_t *fifo_ring(std::size_t c) { return fifo_base_ + c * fifo_stride_; }
    const std::uint32_t *fifo_ring(std::size_t c) const { return fifo_base_ + c * fifo_stride_; }
    std::vector<Waiter> waiter_slots_;  // c's waiters, oldest first: c * waiter_stride_
    std::size_t fifo_stride_ = 0, waiter_stride_ = 0;
    // The channel leaving port p of device d is out_channel_[first_port_[d] + p].
    std::vector<std::uint32_t> first_port_;
    std::vector<int> out_channel_;
    std::vector<Nic> nics_;
    std::vector<Packet> packets_;
    std::vector<std::uint32_t> free_packets_;
    std::vector<Transfer> transfers_;
    std::vector<std::uint32_t> free_transfers_;
    std::vector<TransferClient *> clients_;
    std::uint64_t live_transfers_ = 0;
    Time hop_latency_ = 0, turnaround_ = 0, disk_interval_ = 0;
    NetworkStats stats_;
};

}  // namespace sansim
