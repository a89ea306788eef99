// Phase 3b's pull-and-merge (see remote_merge.hpp).
#include "remote_merge.hpp"

#include <algorithm>
#include <mutex>

#include "sortapp/io_ring.hpp"
#include "sortapp/loser_tree.hpp"
#include "sortapp/pending_file.hpp"
#include "sortapp/sequential_writer.hpp"

namespace sortapp::cluster {

namespace {

// One source node's range, read ahead through `depth` buffers.
struct Stream {
    struct Slot {
        Buffer buf;
        size_t bytes = 0;
        bool pending = false;
        bool ready = false;
        int status = 0;
    };
    int node = 0;
    uint64_t handle = 0;
    uint64_t next = 0, end = 0;  // byte offsets still to request
    std::vector<Slot> slots;
    unsigned cur = 0;  // slot being consumed
    size_t pos = 0;    // byte offset in it
    bool exhausted = false;
};

// A completion's cookie: which stream and slot.
struct Tag {
    Stream *stream;
    unsigned slot;
};

// The streams, their buffers and the completion queue their reads land on. Every read issued
// is waited for before its buffer is freed, whatever went wrong; reads that never complete (a
// node that stopped answering) keep their buffers and the queue until the process ends.
struct Pull {
    Pull(msg_cq_t *q, int stall) : cq(q), stall_ms(stall) {}
    Pull(const Pull &) = delete;
    Pull &operator=(const Pull &) = delete;
    ~Pull() {
        msg_completion_t c;
        while (in_flight > 0 && msg_cq_wait(cq, stall_ms, &c) == MSG_OK) --in_flight;
        if (in_flight == 0) {
            msg_cq_destroy(cq);
            return;
        }
        // Deliberately kept: freeing them would let a late read write into freed memory.
        static std::mutex mu;
        static std::vector<std::vector<Stream>> *abandoned = new std::vector<std::vector<Stream>>;
        std::lock_guard<std::mutex> lk(mu);
        abandoned->push_back(std::move(streams));
    }
    msg_cq_t *cq;
    int stall_ms;
    std::vector<Stream> streams;
    std::vector<std::vector<Tag>> tags;
    unsigned in_flight = 0;
};

}  // namespace

Status remote_merge(rio_t *rio, msg_context_t *msg, int self, const RecordFormat &format,
                    const MergeOrder &order, const MergeSettings &settings,
                    RemoteMergeResult &result,
                    const std::function<void(uint64_t, uint64_t)> &progress) {
    const size_t R = format.record_size;
    size_t block = settings.block / R * R;
    if (block == 0) block = R;
    const unsigned depth = std::max(2u, settings.depth);
    const size_t sources = order.handles.size();

    msg_cq_t *cq = nullptr;
    if (msg_cq_create(msg, &cq) != MSG_OK) return Status::error("cannot create a completion queue");
    Pull pull(cq, settings.stall_ms);
    std::vector<Stream> &streams = pull.streams;
    streams.resize(sources);
    pull.tags.resize(sources);
    auto issue = [&](Stream &s, unsigned slot) -> Status {
        Stream::Slot &sl = s.slots[slot];
        sl.ready = false;
        if (s.next >= s.end) {
            sl.bytes = 0;
            return Status::ok();
        }
        sl.bytes = static_cast<size_t>(std::min<uint64_t>(block, s.end - s.next));
        int rc = rio_read(rio, s.node, s.handle, s.next, sl.buf.data(), sl.bytes, cq,
                          &pull.tags[static_cast<size_t>(&s - streams.data())][slot]);
        if (rc != RIO_OK)
            return Status::error("remote read from node " + std::to_string(s.node) + ": " +
                                 rio_strerror(rc));
        sl.pending = true;
        s.next += sl.bytes;
        ++pull.in_flight;
        return Status::ok();
    };
    // Waits for one read and files it. A node silent for stall_ms is named as stopped.
    auto reap = [&]() -> Status {
        msg_completion_t c;
        int rc = msg_cq_wait(cq, settings.stall_ms, &c);
        if (rc == MSG_ERR_TIMEOUT) {
            std::string who;
            for (const Stream &s : streams) {
                bool waiting = false;
                for (const Stream::Slot &sl : s.slots) waiting = waiting || sl.pending;
                if (waiting) who.append(who.empty() ? "" : ", ").append(std::to_string(s.node));
            }
            return Status::error("no remote read completed for " +
                                 std::to_string(settings.stall_ms / 1000) +
                                 " s; waiting on node(s) " + who + " (stopped or unreachable?)");
        }
        if (rc != MSG_OK)
            return Status::error(std::string("waiting for remote reads: ") + msg_strerror(rc));
        auto *t = static_cast<Tag *>(c.cookie);
        Stream::Slot &sl = t->stream->slots[t->slot];
        --pull.in_flight;
        sl.pending = false;
        if (c.status != RIO_OK || c.bytes != sl.bytes)
            return Status::error("remote read from node " + std::to_string(t->stream->node) +
                                 " failed: " +
                                 (c.status == MSG_ERR_PEER_FAILED ? "the node exited or was killed"
                                                                  : rio_strerror(c.status)));
        sl.ready = true;
        if (t->stream->node == self)
            result.bytes_local += c.bytes;
        else
            result.bytes_received += c.bytes;
        return Status::ok();
    };

    Status st;
    for (size_t i = 0; i < sources && st; ++i) {
        Stream &s = streams[i];
        s.node = static_cast<int>(i);
        s.handle = order.handles[i];
        s.next = order.first[i] * R;
        s.end = order.last[i] * R;
        s.exhausted = s.next >= s.end;
        s.slots.resize(depth);
        for (unsigned k = 0; k < depth; ++k) {
            s.slots[k].buf = Buffer(block);
            pull.tags[i].push_back({&s, k});
        }
        for (unsigned k = 0; k < depth && st; ++k) st = issue(s, k);
    }
    // Every stream's first block in hand before the tree is built.
    auto wait_ready = [&](Stream &s) -> Status {
        while (!s.exhausted && !s.slots[s.cur].ready) {
            if (!s.slots[s.cur].pending) {
                s.exhausted = true;  // nothing more was requested: the range is done
                break;
            }
            SORTAPP_TRY(reap());
        }
        return Status::ok();
    };
    for (size_t i = 0; i < sources && st; ++i) st = wait_ready(streams[i]);

    PendingFile out;
    IoRing ring;
    if (st) st = out.create(settings.output, true, settings.temp_tag);
    if (st) st = ring.init(8);
    if (!st) return st;  // pull's destructor waits for the reads still in flight
    {
        SequentialWriter writer(ring, out.file, 4u << 20, 3);
        auto record = [&](size_t i) {
            const Stream &s = streams[i];
            return s.slots[s.cur].buf.data() + s.pos;
        };
        auto less = [&](size_t a, size_t b) { return format.compare(record(a), record(b)) < 0; };
        auto exhausted = [&](size_t i) { return streams[i].exhausted; };
        LoserTree<decltype(less), decltype(exhausted)> tree(sources, less, exhausted);
        uint64_t total = 0;
        for (size_t i = 0; i < sources; ++i) total += (order.last[i] - order.first[i]) * R;
        for (size_t w = tree.winner(); w < sources && st; w = tree.winner()) {
            Stream &s = streams[w];
            st = writer.append(record(w), R);
            ++result.records;
            s.pos += R;
            if (progress && (result.records & 0x3fff) == 0) progress(result.records * R, total);
            if (s.pos == s.slots[s.cur].bytes) {
                // This block is used up: refill it with the stream's next, move on.
                st = st ? issue(s, s.cur) : st;
                s.cur = (s.cur + 1) % depth;
                s.pos = 0;
                if (st) st = wait_ready(s);
            }
            tree.replay();
        }
        if (st) st = writer.finish(true);
    }
    while (st && pull.in_flight > 0) st = reap();
    if (!st) return st;
    result.pending_output = out.keep();
    return Status::ok();
}

}  // namespace sortapp::cluster
