// Restricted mode: one long send and one long receive move data at a time.
// A receive takes the receive slot before its CTS; a send takes the send slot
// when its CTS arrives. Where the receiver moves the data (RDMA read) the gate
// adds the turns the bare protocol does without: the receiver sends a CTS
// instead of reading at once, and reads when the sender, holding its send
// slot, answers GO. So a slot is only ever held by a pair whose other side
// has committed too: a send slot by a send that has its CTS, whose receiver
// already holds its receive slot; a receive slot by a receive whose sender
// either moves data now or waits only for its own send slot, held by such a
// moving pair. Waits are one step deep and never form a cycle; RTS packets
// are never held back.
#include "protocol/restricted.hpp"

namespace msg {

bool RestrictedGate::take_cts(Request &r, const WireHeader &cts) {
    // A puller's CTS only asks for the sender's turn: plain, never a write target.
    if (inner_.receiver_pulls()) return (cts.flags & kFlagRdmaWrite) == 0;
    return inner_.take_cts(r, cts);
}

void RestrictedGate::send_data(Request &r) {
    if (slots_.send_busy)
        slots_.send_waiting.emplace_back(r.id, this);
    else
        admit_send(r);
}

void RestrictedGate::admit_send(Request &r) {
    slots_.send_busy = true;
    slots_.send_holder = r.id;
    if (!inner_.receiver_pulls()) {
        inner_.send_data(r);
        return;
    }
    WireHeader go = packet_fields(PacketType::Go);
    go.send_id = r.id;
    go.recv_id = r.remote_id;
    host_.send_control(r.peer, go);
}

void RestrictedGate::start_recv(Request &r) {
    if (slots_.recv_busy)
        slots_.recv_waiting.emplace_back(r.id, this);
    else
        admit_recv(r);
}

void RestrictedGate::admit_recv(Request &r) {
    slots_.recv_busy = true;
    slots_.recv_holder = r.id;
    if (!inner_.receiver_pulls()) {
        inner_.start_recv(r);
        return;
    }
    r.cts = true;
    host_.send_control(r.peer, cts_fields(r));
}

bool RestrictedGate::on_go(Request &r, const WireHeader &h) {
    // GO answers the CTS of a pulling receive, once: a second one would start
    // the reads again over those in flight.
    if (!inner_.receiver_pulls() || r.remote_id != h.send_id || !r.cts || r.posted_bytes > 0 ||
        r.outstanding > 0 || r.mr)
        return false;
    inner_.start_recv(r);
    return true;
}

void RestrictedGate::ended(uint64_t id, bool is_send) {
    if (is_send && slots_.send_holder == id)
        release_send();
    else if (!is_send && slots_.recv_holder == id)
        release_recv();
}

void RestrictedGate::release_send() {
    slots_.send_busy = false;
    slots_.send_holder = 0;
    while (!slots_.send_waiting.empty() && !slots_.send_busy) {
        auto [id, gate] = slots_.send_waiting.front();
        slots_.send_waiting.pop_front();
        if (Request *r = host_.find(id)) gate->admit_send(*r);
    }
}

void RestrictedGate::release_recv() {
    slots_.recv_busy = false;
    slots_.recv_holder = 0;
    while (!slots_.recv_waiting.empty() && !slots_.recv_busy) {
        auto [id, gate] = slots_.recv_waiting.front();
        slots_.recv_waiting.pop_front();
        if (Request *r = host_.find(id)) gate->admit_recv(*r);
    }
}

void RestrictedGate::abort() {
    // The slots stay as they are: nothing moves after an abort.
    slots_.send_waiting.clear();
    slots_.recv_waiting.clear();
    slots_.send_holder = 0;
    slots_.recv_holder = 0;
}

}  // namespace msg
