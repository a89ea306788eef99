// NICs: the block transfer engine cuts transfers into request packets while fewer than the
// outstanding-request limit are unanswered; the target's AVT answers each request after its
// PCI transaction; the PCI bus is one FIFO server shared by the BTE, the AVT and disk DMA.
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
    pair_used_[static_cast<std::size_t>(initiator) * static_cast<std::size_t>(topo_.nodes) +
               static_cast<std::size_t>(target)] = 1;
    stats_.payload_injected += bytes;
    nics_[static_cast<std::size_t>(initiator)].bte_queue.push_back(id);
    bte_step(initiator);
    return id;
}

void Network::bte_step(int n) {
    Nic &nic = nics_[static_cast<std::size_t>(n)];
    while (!nic.bte_busy && nic.outstanding < params_.outstanding_limit) {
        while (static_cast<int>(nic.bte_active.size()) < params_.bte_engines &&
               !nic.bte_queue.empty()) {
            nic.bte_active.push_back(nic.bte_queue.front());
            nic.bte_queue.pop_front();
        }
        if (nic.bte_active.empty()) return;
        const std::size_t slot = nic.bte_rr++ % nic.bte_active.size();
        const std::uint32_t tid = nic.bte_active[slot];
        Transfer &t = transfers_[tid];
        const std::uint64_t offset =
            static_cast<std::uint64_t>(t.issued) * static_cast<std::uint64_t>(params_.max_payload);
        const auto chunk = static_cast<std::uint16_t>(
            std::min<std::uint64_t>(static_cast<std::uint64_t>(params_.max_payload),
                                    t.bytes > offset ? t.bytes - offset : 0));
        if (++t.issued == t.packets)
            nic.bte_active.erase(nic.bte_active.begin() + static_cast<std::ptrdiff_t>(slot));
        // Without acknowledgements nothing would free a write's slot: it takes none.
        if (t.read || params_.acks != AckPath::none) or_acquire(n);
        const std::uint32_t pkt = alloc_packet();
        Packet &p = packets_[pkt];
        p.transfer = tid;
        p.src = n;
        p.dst = t.target;
        p.fabric = static_cast<std::uint8_t>(t.fabric);
        p.payload = chunk;
        p.issued = now_;
        if (t.read) {
            // The payload comes back in the response; the request is header only.
            p.kind = PacketKind::read_request;
            p.length = static_cast<std::uint16_t>(params_.header_bytes);
            nic_enqueue(n, pkt, false);
        } else {
            p.kind = PacketKind::write_request;
            p.length = static_cast<std::uint16_t>(params_.header_bytes + chunk);
            if (params_.pci_mbps > 0) {
                // The single-threaded BTE waits for its PCI read before the next packet.
                nic.bte_busy = true;
                pci(n, pci_read_time(chunk), kBteFetch, pkt);
                return;
            }
            nic_enqueue(n, pkt, false);
        }
    }
}

void Network::nic_enqueue(int n, std::uint32_t pkt, bool response) {
    Nic &nic = nics_[static_cast<std::size_t>(n)];
    Packet &p = packets_[pkt];
    NicPort &np = nic.port[p.fabric];
    p.next = kNil;
    // Responses reuse their request's record.
    p.vl = spread_ ? static_cast<std::uint8_t>(p.dst % lanes_) : 0;
    if (valiant_) pick_via(pkt);
    if (!response) {
        p.created = now_;
        ++nic.requests;
    }
    std::uint32_t &head = response ? np.resp_head : np.req_head;
    std::uint32_t &tail = response ? np.resp_tail : np.req_tail;
    if (tail == kNil) {
        head = tail = pkt;
    } else {
        packets_[tail].next = pkt;
        tail = pkt;
    }
    if (!np.requesting) {
        np.requesting = true;
        request(np.out, static_cast<std::uint32_t>(channels_.size()) +
                            static_cast<std::uint32_t>(n) * 2 + p.fabric);
    }
}

void Network::nic_receive(int n, std::uint32_t pkt) {
    Packet &p = packets_[pkt];
    progress();
    switch (p.kind) {
        case PacketKind::write_request:
            write_arrived(n, pkt);
            break;
        case PacketKind::read_request:
            if (params_.pci_mbps > 0) {
                pci(n, pci_read_time(p.payload), kTargetRead, pkt);
            } else {
                make_response(n, pkt);
            }
            break;
        case PacketKind::write_response:
        case PacketKind::read_response: {
            if (in_window(p.issued)) {
                stats_.packet_rtt.add(now_ - p.created);
                stats_.request_rtt.add(now_ - p.issued);
            }
            or_release(n);
            if (p.kind == PacketKind::read_response) {
                deliver(pkt);
                if (params_.pci_mbps > 0) {
                    pci(n, pci_write_time(p.payload), kInitiatorWrite, pkt);
                    break;
                }
            }
            const std::uint32_t tid = p.transfer;
            free_packet(pkt);
            answered(tid);
            bte_step(n);
            break;
        }
    }
}

// The AVT writes the payload over PCI and answers; without acknowledgements the write is done
// as its data arrives.
void Network::write_arrived(int n, std::uint32_t pkt) {
    deliver(pkt);
    const std::uint32_t tid = packets_[pkt].transfer;
    if (params_.pci_mbps > 0)
        pci(n, pci_write_time(packets_[pkt].payload), kTargetWrite, pkt);
    else if (params_.acks != AckPath::none)
        make_response(n, pkt);
    if (params_.acks != AckPath::none) return;
    if (params_.pci_mbps <= 0) free_packet(pkt);
    answered(tid);  // may start transfers: nothing of the packet is used after it
}

// An acknowledgement on the ideal separate path: the zero-load time of a header-only packet
// over as many routers as the request crossed, at the default link figures.
Time Network::separate_ack_time(const Packet &response) const {
    const Time hops = routing_.hop_count(response.fabric, response.dst, response.src);
    const double mbps = params_.link_mbps > 0 ? params_.link_mbps : params_.symbol_mhz;
    const Time delay = from_ns(params_.link_delay_ns);
    return ps_per_byte(mbps) * response.length + (hops + 1) * delay + hops * hop_latency_;
}

void Network::make_response(int n, std::uint32_t request_pkt) {
    Packet &rq = packets_[request_pkt];
    const bool read = rq.kind == PacketKind::read_request;
    // Reuse the request's record: same transfer, fabric and creation time (for the RTT).
    rq.kind = read ? PacketKind::read_response : PacketKind::write_response;
    std::swap(rq.src, rq.dst);
    rq.phase = 0;
    rq.length = static_cast<std::uint16_t>(params_.header_bytes + (read ? rq.payload : 0));
    if (!read && params_.acks == AckPath::separate) {
        queue_.push(now_ + turnaround_ + separate_ack_time(rq), kNicRx,
                    static_cast<std::uint32_t>(rq.dst), request_pkt);
        return;
    }
    if (turnaround_ > 0) {
        queue_.push(now_ + turnaround_, pci_event(kTurnaround), static_cast<std::uint32_t>(n),
                    request_pkt);
        return;
    }
    const Time created = rq.created;
    nic_enqueue(n, request_pkt, true);
    packets_[request_pkt].created = created;
}

void Network::deliver(std::uint32_t pkt) {
    const Packet &p = packets_[pkt];
    Transfer &t = transfers_[p.transfer];
    t.delivered += p.payload;
    if (t.delivered > t.bytes) ++stats_.duplicate_deliveries;
    stats_.payload_delivered += p.payload;
    Nic &to = nics_[static_cast<std::size_t>(p.dst)];
    Nic &from = nics_[static_cast<std::size_t>(p.src)];
    to.rx_payload += p.payload;
    from.tx_payload += p.payload;
    stats_.last_delivery = now_;
    stats_.series.add_bytes(now_, p.payload);
    if (in_window(now_)) {
        stats_.payload_delivered_window += p.payload;
        to.rx_window += p.payload;
        from.tx_window += p.payload;
        to.last_rx = from.last_tx = now_;
    }
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
        nics_[static_cast<std::size_t>(t.initiator)].latency.add(latency);
        stats_.series.add_latency(t.queued, latency);
        // The window's work is done: nothing more to measure.
        if (--stats_.window_live == 0 && now_ >= window_.end) stop();
    }
    free_transfers_.push_back(tid);
    if (t.client != nullptr) t.client->transfer_done(*this, tid, t.tag);
}

Time Network::pci_read_time(int bytes) const {
    return from_ns(params_.pci_read_latency_ns) +
           static_cast<Time>(bytes * 1e6 / params_.pci_mbps + 0.5);
}

Time Network::pci_write_time(int bytes) const {
    return from_ns(params_.pci_write_overhead_ns) +
           static_cast<Time>(bytes * 1e6 / params_.pci_mbps + 0.5);
}

void Network::pci(int n, Time duration, PciOp op, std::uint32_t pkt) {
    Nic &nic = nics_[static_cast<std::size_t>(n)];
    const Time begin = std::max(now_, nic.pci_free);
    nic.pci_free = begin + duration;
    nic.pci_busy += duration;
    queue_.push(nic.pci_free, pci_event(op), static_cast<std::uint32_t>(n), pkt);
}

void Network::pci_done(int n, PciOp op, std::uint32_t pkt) {
    switch (op) {
        case kBteFetch:
            nics_[static_cast<std::size_t>(n)].bte_busy = false;
            nic_enqueue(n, pkt, false);
            bte_step(n);
            break;
        case kTargetWrite:
            if (params_.acks == AckPath::none)
                free_packet(pkt);
            else
                make_response(n, pkt);
            break;
        case kTargetRead:
            make_response(n, pkt);
            break;
        case kInitiatorWrite: {
            const std::uint32_t tid = packets_[pkt].transfer;
            free_packet(pkt);
            answered(tid);
            bte_step(n);
            break;
        }
        case kDiskIo:
            break;
        case kTurnaround: {
            const Time created = packets_[pkt].created;
            nic_enqueue(n, pkt, true);
            packets_[pkt].created = created;
            break;
        }
    }
}

void Network::disk_burst(int n) {
    pci(n, static_cast<Time>(params_.disk_burst_bytes * 1e6 / params_.pci_mbps + 0.5), kDiskIo, 0);
    if (!stopped_) queue_.push(now_ + disk_interval_, kDisk, static_cast<std::uint32_t>(n), 0);
}

void Network::or_acquire(int n) {
    Nic &nic = nics_[static_cast<std::size_t>(n)];
    if (++nic.outstanding == params_.outstanding_limit) nic.exhausted_since = now_;
}

void Network::or_release(int n) {
    Nic &nic = nics_[static_cast<std::size_t>(n)];
    if (nic.outstanding-- == params_.outstanding_limit && nic.exhausted_since >= 0) {
        nic.exhausted_total += now_ - nic.exhausted_since;
        add_exhausted(nic.exhausted_since, now_);
        nic.exhausted_since = -1;
    }
}

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
    for (Nic &nic : nics_) {
        if (nic.exhausted_since >= 0) {
            nic.exhausted_total += now_ - nic.exhausted_since;
            add_exhausted(nic.exhausted_since, now_);
            nic.exhausted_since = now_;
        }
    }
    for (Channel &ch : channels_)
        if (ch.busy) {
            ch.busy_total += now_ - ch.busy_since;
            ch.busy_since = now_;
        }
    const auto bins = static_cast<std::size_t>((now_ + stats_.series_bin - 1) / stats_.series_bin);
    if (stats_.or_series.size() < bins) stats_.or_series.resize(bins, 0);
}

}  // namespace sansim
