// Encoding of the cluster sort's messages (see messages.hpp).
#include "messages.hpp"

#include <cmath>

#include "codec.hpp"

namespace sortapp::cluster {

namespace {

// Rates and times: what a node measured, so never negative, NaN or infinite.
bool figure(double v) {
    return std::isfinite(v) && v >= 0;
}

bool sane(const PhaseFigures &f) {
    return figure(f.seconds) && figure(f.cpu_seconds) && figure(f.expected_seconds);
}

void put(Writer &w, const PhaseFigures &f) {
    w.str(f.phase);
    w.f64(f.seconds);
    w.f64(f.cpu_seconds);
    w.f64(f.expected_seconds);
    w.u64(f.bytes_read);
    w.u64(f.bytes_written);
    w.u64(f.bytes_sent);
    w.u64(f.bytes_received);
    w.str(f.resource);
}

void get(Reader &r, PhaseFigures &f) {
    f.phase = r.str();
    f.seconds = r.f64();
    f.cpu_seconds = r.f64();
    f.expected_seconds = r.f64();
    f.bytes_read = r.u64();
    f.bytes_written = r.u64();
    f.bytes_sent = r.u64();
    f.bytes_received = r.u64();
    f.resource = r.str();
}

void put(Writer &w, const Window &win) {
    w.u64(win.lo);
    w.u64(win.hi);
}

Window get_window(Reader &r) {
    Window win;
    win.lo = r.u64();
    win.hi = r.u64();
    return win;
}

void put(Writer &w, const Element &e) {
    w.str(e.key);
    w.u32(e.node);
    w.u64(e.pos);
}

Element get_element(Reader &r) {
    Element e;
    e.key = r.str();
    e.node = r.u32();
    e.pos = r.u64();
    return e;
}

void put(Writer &w, const std::vector<uint64_t> &v) {
    w.u64(v.size());
    for (uint64_t x : v) w.u64(x);
}

std::vector<uint64_t> get_u64s(Reader &r) {
    std::vector<uint64_t> v(r.count(8));
    for (uint64_t &x : v) x = r.u64();
    return v;
}

}  // namespace

std::vector<char> encode(const JobParams &p) {
    Writer w;
    w.u64(p.record_size);
    w.u64(p.key_size);
    w.u64(p.memory_budget);
    w.u64(p.block_bytes);
    w.u32(p.read_depth);
    return w.bytes();
}

bool decode(const void *data, size_t len, JobParams &p) {
    Reader r(data, len);
    p.record_size = r.u64();
    p.key_size = r.u64();
    p.memory_budget = r.u64();
    p.block_bytes = r.u64();
    p.read_depth = r.u32();
    return r.finished() && p.block_bytes >= p.record_size && p.block_bytes <= kMaxBlockBytes &&
           p.read_depth >= kMinReadDepth && p.read_depth <= kMaxReadDepth;
}

std::vector<char> encode(const NodeCheck &c) {
    Writer w;
    w.u64(c.records);
    w.f64(c.disk_read_mb_s);
    w.f64(c.disk_write_mb_s);
    w.str(c.disk);
    return w.bytes();
}

bool decode(const void *data, size_t len, NodeCheck &c) {
    Reader r(data, len);
    c.records = r.u64();
    c.disk_read_mb_s = r.f64();
    c.disk_write_mb_s = r.f64();
    c.disk = r.str();
    return r.finished() && figure(c.disk_read_mb_s) && figure(c.disk_write_mb_s);
}

std::vector<char> encode(const LocalDone &d) {
    Writer w;
    w.u64(d.records);
    w.u64(d.handle);
    w.u64(d.phases.size());
    for (const PhaseFigures &f : d.phases) put(w, f);
    return w.bytes();
}

bool decode(const void *data, size_t len, LocalDone &d) {
    Reader r(data, len);
    d.records = r.u64();
    d.handle = r.u64();
    d.phases.resize(r.count(72));
    bool ok = true;
    for (PhaseFigures &f : d.phases) {
        get(r, f);
        ok = ok && sane(f);
    }
    return r.finished() && ok;
}

std::vector<char> encode(const MergeOrder &m) {
    Writer w;
    put(w, m.handles);
    put(w, m.first);
    put(w, m.last);
    w.f64(m.network_mb_s);
    return w.bytes();
}

bool decode(const void *data, size_t len, MergeOrder &m) {
    Reader r(data, len);
    m.handles = get_u64s(r);
    m.first = get_u64s(r);
    m.last = get_u64s(r);
    m.network_mb_s = r.f64();
    if (!r.finished() || m.first.size() != m.handles.size() || m.last.size() != m.handles.size() ||
        !figure(m.network_mb_s))
        return false;
    for (size_t i = 0; i < m.handles.size(); ++i)
        if (m.first[i] > m.last[i]) return false;
    return true;
}

std::vector<char> encode(const PhaseFigures &f) {
    Writer w;
    put(w, f);
    return w.bytes();
}

bool decode(const void *data, size_t len, PhaseFigures &f) {
    Reader r(data, len);
    get(r, f);
    return r.finished() && sane(f);
}

std::vector<char> encode(const SampleRequest &q) {
    Writer w;
    w.u32(q.samples);
    w.u64(q.windows.size());
    for (size_t j = 0; j < q.windows.size(); ++j) {
        put(w, q.windows[j]);
        w.u32(j < q.whole.size() ? q.whole[j] : 0);
    }
    return w.bytes();
}

bool decode(const void *data, size_t len, SampleRequest &q) {
    Reader r(data, len);
    q.samples = r.u32();
    uint64_t n = r.count(20);
    q.windows.resize(n);
    q.whole.resize(n);
    for (uint64_t j = 0; j < n; ++j) {
        q.windows[j] = get_window(r);
        q.whole[j] = static_cast<uint8_t>(r.u32() != 0);
    }
    return r.finished();
}

std::vector<char> encode(const SampleReply &q) {
    Writer w;
    w.u64(q.per_split.size());
    for (const auto &v : q.per_split) {
        w.u64(v.size());
        for (const Element &e : v) put(w, e);
    }
    return w.bytes();
}

bool decode(const void *data, size_t len, SampleReply &q) {
    Reader r(data, len);
    q.per_split.resize(r.count(8));
    for (auto &v : q.per_split) {
        v.resize(r.count(20));
        for (Element &e : v) e = get_element(r);
    }
    return r.finished();
}

std::vector<char> encode(const CountRequest &q) {
    Writer w;
    w.u64(q.windows.size());
    for (size_t j = 0; j < q.windows.size(); ++j) {
        put(w, q.windows[j]);
        const auto &p = j < q.pivots.size() ? q.pivots[j] : std::vector<Element>{};
        w.u64(p.size());
        for (const Element &e : p) put(w, e);
    }
    return w.bytes();
}

bool decode(const void *data, size_t len, CountRequest &q) {
    Reader r(data, len);
    uint64_t n = r.count(24);
    q.windows.resize(n);
    q.pivots.resize(n);
    for (uint64_t j = 0; j < n; ++j) {
        q.windows[j] = get_window(r);
        q.pivots[j].resize(r.count(20));
        for (Element &e : q.pivots[j]) e = get_element(r);
    }
    return r.finished();
}

std::vector<char> encode(const CountReply &q) {
    Writer w;
    w.u64(q.counts.size());
    for (const auto &v : q.counts) put(w, v);
    return w.bytes();
}

bool decode(const void *data, size_t len, CountReply &q) {
    Reader r(data, len);
    q.counts.resize(r.count(8));
    for (auto &v : q.counts) v = get_u64s(r);
    return r.finished();
}

}  // namespace sortapp::cluster
