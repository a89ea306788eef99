// A node's network interface: the block transfer engine (BTE) that cuts transfers into request
// packets under the outstanding-request limit, the AVT that answers requests, the PCI bus they
// and disk DMA share, and one port per fabric. The Network owns one per node and calls in.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/histogram.hpp"
#include "engine/time.hpp"

namespace sansim {

class Network;

// No packet: the end of a NIC port's queue, an empty FIFO slot or waiter.
constexpr std::uint32_t kNil = 0xFFFFFFFFu;

// What a NIC did, for reports.
struct NicStats {
    std::uint64_t tx_payload = 0, rx_payload = 0;
    std::uint64_t requests = 0;
    Time exhausted_total = 0;  // outstanding-request limit reached (open interval not counted)
    Time pci_busy = 0;         // booked on the PCI bus, bookings ahead of now included
    // Inside the measurement window: payload delivered from and to this node, the last such
    // deliveries, and the latency of the transfers it initiated.
    std::uint64_t tx_window = 0, rx_window = 0;
    Time last_tx = -1, last_rx = -1;
    Histogram latency;
};

class Nic {
  public:
    // What a PCI transaction was for; its end is an event (kTurnaround is not on the bus: a
    // response whose AVT processing time has elapsed).
    enum PciOp : std::uint32_t {
        kBteFetch,
        kTargetWrite,
        kTargetRead,
        kInitiatorWrite,
        kDiskIo,
        kTurnaround
    };

    // The NIC of `node`; it reaches packets, transfers, events and its links through `net`,
    // which must outlive it and stay where it is.
    Nic(Network &net, int node) : net_(&net), node_(node) {}
    // Port `fabric` sends on channel `out`.
    void attach(int fabric, int out) { port_[fabric].out = out; }
    int port_out(int fabric) const { return port_[fabric].out; }

    // Queues a transfer this node initiates on the BTE.
    void queue_transfer(std::uint32_t transfer);
    // A packet's tail has arrived here.
    void receive(std::uint32_t pkt);
    // A PCI transaction (or the AVT's turnaround) has ended.
    void pci_done(PciOp op, std::uint32_t pkt);
    // One disk DMA burst on the PCI bus; the next is scheduled until the run stops.
    void disk_burst();

    // Port `fabric`'s next packet to send, responses first; kNil when it holds none.
    std::uint32_t port_head(int fabric) const {
        const Port &p = port_[fabric];
        return p.resp_head != kNil ? p.resp_head : p.req_head;
    }
    // The port's link took `pkt`, its head packet, whose successor in the queue is `next`.
    void port_sent(int fabric, std::uint32_t pkt, std::uint32_t next) {
        Port &p = port_[fabric];
        if (p.resp_head == pkt) {
            p.resp_head = next;
            if (next == kNil) p.resp_tail = kNil;
        } else {
            p.req_head = next;
            if (next == kNil) p.req_tail = kNil;
        }
    }
    // The tail of the port's packet has left.
    void port_tail_out(int fabric);

    // Payload delivered from (sent) or to (received) this node now.
    void count_sent(std::uint32_t bytes, bool in_window, Time now) {
        stats_.tx_payload += bytes;
        if (!in_window) return;
        stats_.tx_window += bytes;
        stats_.last_tx = now;
    }
    void count_received(std::uint32_t bytes, bool in_window, Time now) {
        stats_.rx_payload += bytes;
        if (!in_window) return;
        stats_.rx_window += bytes;
        stats_.last_rx = now;
    }
    // A transfer this node initiated inside the window is done.
    void count_latency(Time latency) { stats_.latency.add(latency); }
    // Time the outstanding-request limit was reached, the open interval up to `now` included.
    Time exhausted_until(Time now) const {
        return stats_.exhausted_total + (exhausted_since_ >= 0 ? now - exhausted_since_ : 0);
    }
    // Time the PCI bus was busy up to `now`: the bus is booked ahead (FIFO), and what is booked
    // past now has not happened yet.
    Time pci_busy_until(Time now) const {
        return stats_.pci_busy - (pci_free_ > now ? pci_free_ - now : 0);
    }
    // Counts an open exhaustion interval up to now and starts it afresh, so that statistics
    // cover the run so far.
    void close_exhaustion();

    const NicStats &stats() const { return stats_; }

  private:
    struct Port {
        int out = -1;  // channel
        std::uint32_t resp_head = kNil, resp_tail = kNil, req_head = kNil, req_tail = kNil;
        bool requesting = false;
    };

    void bte_step();
    void enqueue(std::uint32_t pkt, bool response);
    void write_arrived(std::uint32_t pkt);
    void make_response(std::uint32_t request);
    Time separate_ack_time(std::uint32_t response) const;
    void pci(Time duration, PciOp op, std::uint32_t pkt);
    Time pci_read_time(int bytes) const;
    Time pci_write_time(int bytes) const;
    void or_acquire();
    void or_release();

    Network *net_;
    int node_;
    Port port_[2];
    int outstanding_ = 0;
    Time exhausted_since_ = -1;
    std::deque<std::uint32_t> bte_queue_;
    std::vector<std::uint32_t> bte_active_;
    std::uint32_t bte_rr_ = 0;
    bool bte_busy_ = false;
    Time pci_free_ = 0;
    NicStats stats_;
};

}  // namespace sansim
