// NICs: the block transfer engine cuts transfers into request packets while fewer than the
// outstanding-request limit are unanswered; the target's AVT answers each request after its
// PCI transaction; the PCI bus is one FIFO server shared by the BTE, the AVT and disk DMA.
#include "model/nic.hpp"

#include <algorithm>

#include "model/network.hpp"

namespace sansim {

void Nic::queue_transfer(std::uint32_t transfer) {
    bte_queue_.push_back(transfer);
    bte_step();
}

void Nic::bte_step() {
    Network &net = *net_;
    const Params &params = net.params_;
    while (!bte_busy_ && outstanding_ < params.outstanding_limit) {
        while (static_cast<int>(bte_active_.size()) < params.bte_engines && !bte_queue_.empty()) {
            bte_active_.push_back(bte_queue_.front());
            bte_queue_.pop_front();
        }
        if (bte_active_.empty()) return;
        const std::size_t slot = bte_rr_++ % bte_active_.size();
        const std::uint32_t tid = bte_active_[slot];
        Transfer &t = net.transfers_[tid];
        const std::uint64_t offset =
            static_cast<std::uint64_t>(t.issued) * static_cast<std::uint64_t>(params.max_payload);
        const auto chunk = static_cast<std::uint16_t>(
            std::min<std::uint64_t>(static_cast<std::uint64_t>(params.max_payload),
                                    t.bytes > offset ? t.bytes - offset : 0));
        if (++t.issued == t.packets)
            bte_active_.erase(bte_active_.begin() + static_cast<std::ptrdiff_t>(slot));
        // Without acknowledgements nothing would free a write's slot: it takes none.
        if (t.read || params.acks != AckPath::none) or_acquire();
        const std::uint32_t pkt = net.alloc_packet();
        Packet &p = net.packets_[pkt];
        p.transfer = tid;
        p.src = node_;
        p.dst = t.target;
        p.fabric = static_cast<std::uint8_t>(t.fabric);
        p.payload = chunk;
        p.issued = net.now_;
        if (t.read) {
            // The payload comes back in the response; the request is header only.
            p.kind = PacketKind::read_request;
            p.length = static_cast<std::uint16_t>(params.header_bytes);
            enqueue(pkt, false);
        } else {
            p.kind = PacketKind::write_request;
            p.length = static_cast<std::uint16_t>(params.header_bytes + chunk);
            if (params.pci_mbps > 0) {
                // The single-threaded BTE waits for its PCI read before the next packet.
                bte_busy_ = true;
                pci(pci_read_time(chunk), kBteFetch, pkt);
                return;
            }
            enqueue(pkt, false);
        }
    }
}

void Nic::enqueue(std::uint32_t pkt, bool response) {
    Network &net = *net_;
    Packet &p = net.packets_[pkt];
    Port &port = port_[p.fabric];
    p.next = kNil;
    // Responses reuse their request's record.
    net.choose_lane_and_via(pkt);
    if (!response) {
        p.created = net.now_;
        ++stats_.requests;
    }
    std::uint32_t &head = response ? port.resp_head : port.req_head;
    std::uint32_t &tail = response ? port.resp_tail : port.req_tail;
    if (tail == kNil) {
        head = tail = pkt;
    } else {
        net.packets_[tail].next = pkt;
        tail = pkt;
    }
    if (!port.requesting) {
        port.requesting = true;
        net.request(port.out, net.nic_requester(node_, p.fabric));
    }
}

// The link goes to whoever waits for it first; the port asks again if it holds more.
void Nic::port_tail_out(int fabric) {
    Port &port = port_[fabric];
    port.requesting = false;
    net_->arbitrate(port.out);
    if (port_head(fabric) != kNil) {
        port.requesting = true;
        net_->request(port.out, net_->nic_requester(node_, fabric));
    }
}

void Nic::receive(std::uint32_t pkt) {
    Network &net = *net_;
    Packet &p = net.packets_[pkt];
    net.progress();
    switch (p.kind) {
        case PacketKind::write_request:
            write_arrived(pkt);
            break;
        case PacketKind::read_request:
            if (net.params_.pci_mbps > 0) {
                pci(pci_read_time(p.payload), kTargetRead, pkt);
            } else {
                make_response(pkt);
            }
            break;
        case PacketKind::write_response:
        case PacketKind::read_response: {
            if (net.in_window(p.issued)) {
                net.stats_.packet_rtt.add(net.now_ - p.created);
                net.stats_.request_rtt.add(net.now_ - p.issued);
            }
            or_release();
            if (p.kind == PacketKind::read_response) {
                net.deliver(pkt);
                if (net.params_.pci_mbps > 0) {
                    pci(pci_write_time(p.payload), kInitiatorWrite, pkt);
                    break;
                }
            }
            const std::uint32_t tid = p.transfer;
            net.free_packet(pkt);
            net.answered(tid);
            bte_step();
            break;
        }
    }
}

// The AVT writes the payload over PCI and answers; without acknowledgements the write is done
// as its data arrives.
void Nic::write_arrived(std::uint32_t pkt) {
    Network &net = *net_;
    const Params &params = net.params_;
    net.deliver(pkt);
    const std::uint32_t tid = net.packets_[pkt].transfer;
    if (params.pci_mbps > 0)
        pci(pci_write_time(net.packets_[pkt].payload), kTargetWrite, pkt);
    else if (params.acks != AckPath::none)
        make_response(pkt);
    if (params.acks != AckPath::none) return;
    if (params.pci_mbps <= 0) net.free_packet(pkt);
    net.answered(tid);  // may start transfers: nothing of the packet is used after it
}

// An acknowledgement on the ideal separate path: the zero-load time of a header-only packet
// over as many routers as the request crossed, at the default link figures.
Time Nic::separate_ack_time(std::uint32_t response) const {
    const Network &net = *net_;
    const Params &params = net.params_;
    const Packet &p = net.packets_[response];
    const Time hops = net.routing_.hop_count(p.fabric, p.dst, p.src);
    const double mbps = params.link_mbps > 0 ? params.link_mbps : params.symbol_mhz;
    const Time delay = from_ns(params.link_delay_ns);
    return ps_per_byte(mbps) * p.length + (hops + 1) * delay + hops * net.hop_latency_;
}

void Nic::make_response(std::uint32_t request_pkt) {
    Network &net = *net_;
    Packet &rq = net.packets_[request_pkt];
    const bool read = rq.kind == PacketKind::read_request;
    // Reuse the request's record: same transfer, fabric and creation time (for the RTT).
    rq.kind = read ? PacketKind::read_response : PacketKind::write_response;
    std::swap(rq.src, rq.dst);
    rq.phase = 0;
    rq.length = static_cast<std::uint16_t>(net.params_.header_bytes + (read ? rq.payload : 0));
    if (!read && net.params_.acks == AckPath::separate) {
        net.queue_.push(net.now_ + net.turnaround_ + separate_ack_time(request_pkt),
                        Network::kNicRx, static_cast<std::uint32_t>(rq.dst), request_pkt);
        return;
    }
    if (net.turnaround_ > 0) {
        net.queue_.push(net.now_ + net.turnaround_, Network::pci_event(kTurnaround),
                        static_cast<std::uint32_t>(node_), request_pkt);
        return;
    }
    const Time created = rq.created;
    enqueue(request_pkt, true);
    net.packets_[request_pkt].created = created;
}

Time Nic::pci_read_time(int bytes) const {
    const Params &params = net_->params_;
    return from_ns(params.pci_read_latency_ns) +
           static_cast<Time>(bytes * 1e6 / params.pci_mbps + 0.5);
}

Time Nic::pci_write_time(int bytes) const {
    const Params &params = net_->params_;
    return from_ns(params.pci_write_overhead_ns) +
           static_cast<Time>(bytes * 1e6 / params.pci_mbps + 0.5);
}

void Nic::pci(Time duration, PciOp op, std::uint32_t pkt) {
    const Time begin = std::max(net_->now_, pci_free_);
    pci_free_ = begin + duration;
    stats_.pci_busy += duration;
    net_->queue_.push(pci_free_, Network::pci_event(op), static_cast<std::uint32_t>(node_), pkt);
}

void Nic::pci_done(PciOp op, std::uint32_t pkt) {
    Network &net = *net_;
    switch (op) {
        case kBteFetch:
            bte_busy_ = false;
            enqueue(pkt, false);
            bte_step();
            break;
        case kTargetWrite:
            if (net.params_.acks == AckPath::none)
                net.free_packet(pkt);
            else
                make_response(pkt);
            break;
        case kTargetRead:
            make_response(pkt);
            break;
        case kInitiatorWrite: {
            const std::uint32_t tid = net.packets_[pkt].transfer;
            net.free_packet(pkt);
            net.answered(tid);
            bte_step();
            break;
        }
        case kDiskIo:
            break;
        case kTurnaround: {
            const Time created = net.packets_[pkt].created;
            enqueue(pkt, true);
            net.packets_[pkt].created = created;
            break;
        }
    }
}

void Nic::disk_burst() {
    Network &net = *net_;
    pci(static_cast<Time>(net.params_.disk_burst_bytes * 1e6 / net.params_.pci_mbps + 0.5), kDiskIo,
        0);
    if (!net.stopped_)
        net.queue_.push(net.now_ + net.disk_interval_, Network::kDisk,
                        static_cast<std::uint32_t>(node_), 0);
}

void Nic::or_acquire() {
    if (++outstanding_ == net_->params_.outstanding_limit) exhausted_since_ = net_->now_;
}

void Nic::or_release() {
    if (outstanding_-- == net_->params_.outstanding_limit && exhausted_since_ >= 0) {
        const Time now = net_->now_;
        stats_.exhausted_total += now - exhausted_since_;
        net_->add_exhausted(exhausted_since_, now);
        exhausted_since_ = -1;
    }
}

void Nic::close_exhaustion() {
    if (exhausted_since_ < 0) return;
    const Time now = net_->now_;
    stats_.exhausted_total += now - exhausted_since_;
    net_->add_exhausted(exhausted_since_, now);
    exhausted_since_ = now;
}

}  // namespace sansim
