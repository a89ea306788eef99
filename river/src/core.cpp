// The shared lock's error and the counted libmsg operations.
#include "core.hpp"

namespace riv {

void Core::fail(int status, int rank, std::string text) {
    if (error_flag.load(std::memory_order_relaxed) != 0) return;
    error_rank = rank;
    error_text = std::move(text);
    error_flag.store(status, std::memory_order_release);
    cv.notify_all();
}

int Core::isend(int dest, int tag_offset, const void *buf, size_t len, Op *op) {
    in_flight.fetch_add(1, std::memory_order_relaxed);
    int rc = msg_isend(msg, dest, settings.tag + tag_offset, buf, len, cq, op);
    if (rc != MSG_OK) in_flight.fetch_sub(1, std::memory_order_relaxed);
    return rc;
}

int Core::irecv(int source, int tag_offset, void *buf, size_t capacity, Op *op) {
    in_flight.fetch_add(1, std::memory_order_relaxed);
    int rc = msg_irecv(msg, source, settings.tag + tag_offset, buf, capacity, cq, op);
    if (rc != MSG_OK) in_flight.fetch_sub(1, std::memory_order_relaxed);
    return rc;
}

Control make_hello(const Settings &s, uint32_t from_index) {
    Control c = make_control(ControlKind::Hello, from_index);
    c.credits = static_cast<uint32_t>(s.credits);
    c.record_size = s.record_size;
    c.batch_records = s.batch_records;
    c.layout = s.layout.hash;
    c.nsources = static_cast<uint32_t>(s.layout.sources.size());
    c.nsinks = static_cast<uint32_t>(s.layout.sinks.size());
    return c;
}

const char *hello_differs(const Settings &s, const Control &m) {
    if (m.record_size != s.record_size) return "record size";
    if (m.batch_records != s.batch_records) return "batch size";
    if (m.credits != static_cast<uint32_t>(s.credits)) return "credits";
    if (m.nsources != s.layout.sources.size() || m.nsinks != s.layout.sinks.size() ||
        m.layout != s.layout.hash)
        return "sources, sinks or tag";
    return nullptr;
}

}  // namespace riv
