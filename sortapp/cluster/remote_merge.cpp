// Phase 3b's pull-and-merge (see remote_merge.hpp): every source node's range is a record
// stream whose blocks are read with libremoteio, all completing on one queue; the streams are
// merged by the library's merge loop into a pending output file.
#include "remote_merge.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "sortapp/io_ring.hpp"
#include "sortapp/pending_file.hpp"
#include "sortapp/record_stream.hpp"
#include "sortapp/sequential_writer.hpp"
#include "sortapp/stream_merge.hpp"

namespace sortapp::cluster {

namespace {

class Pull;
class RemoteRange;

// A read's completion cookie: which range and slot.
struct Tag {
    RemoteRange *range;
    unsigned slot;
};

// One source node's range of its work file: blocks read with rio_read into the stream's
// buffers. The completions land on the pull's queue, which files them here.
class RemoteRange final : public BlockSource {
  public:
    RemoteRange(Pull &pull, int node, uint64_t handle)
        : pull_(pull), node_(node), handle_(handle) {}

    void set_slots(unsigned slots) override;
    Status start_read(unsigned slot, uint8_t *buffer, uint64_t offset, size_t bytes) override;
    Status finish_read(unsigned slot) override;

    int node() const { return node_; }
    bool waiting() const {
        return std::any_of(slots_.begin(), slots_.end(), [](const Slot &s) { return s.pending; });
    }
    // Files the completion of `slot`'s read: a failed or short read is named.
    Status complete(unsigned slot, const msg_completion_t &c);

  private:
    struct Slot {
        size_t bytes = 0;
        bool pending = false;
        bool ready = false;
    };
    Pull &pull_;
    int node_;
    uint64_t handle_;
    std::vector<Slot> slots_;
    std::vector<Tag> tags_;  // sized once, before any read: cookies of reads in flight
};

// The streams, their buffers and the completion queue their reads land on. Every read issued
// is waited for before its buffer is freed, whatever went wrong; reads that never complete (a
// node that stopped answering) keep their buffers and the queue until the process ends.
class Pull {
  public:
    Pull(rio_t *rio, msg_cq_t *cq, int self, int stall_ms)
        : rio(rio), cq(cq), self(self), stall_ms(stall_ms) {}
    Pull(const Pull &) = delete;
    Pull &operator=(const Pull &) = delete;
    ~Pull();

    // One stream per source node over records [first[i], last[i]) of its work file, started.
    Status open(const RecordFormat &format, const MergeOrder &order, size_t block, unsigned depth);
    // Waits for one read and files it. A node silent for stall_ms is named as stopped.
    Status reap();
    // Waits for every read still in flight.
    Status drain() {
        while (in_flight > 0) SORTAPP_TRY(reap());
        return Status::ok();
    }
    rio_t *const rio;
    msg_cq_t *const cq;
    const int self;
    const int stall_ms;
    RecordStreams streams;
    unsigned in_flight = 0;
    uint64_t bytes_received = 0;  // from other nodes
    uint64_t bytes_local = 0;     // from this node's own work file

  private:
    Status stalled() const;

    std::vector<RemoteRange *> ranges_;  // the streams' sources, in node order
};

void RemoteRange::set_slots(unsigned slots) {
    slots_.resize(slots);
    for (unsigned k = 0; k < slots; ++k) tags_.push_back({this, k});
}

Status RemoteRange::start_read(unsigned slot, uint8_t *buffer, uint64_t offset, size_t bytes) {
    Slot &s = slots_[slot];
    s.ready = false;
    s.bytes = bytes;
    int rc = rio_read(pull_.rio, node_, handle_, offset, buffer, bytes, pull_.cq, &tags_[slot]);
    if (rc != RIO_OK)
        return Status::error("remote read from node " + std::to_string(node_) + ": " +
                             rio_strerror(rc));
    s.pending = true;
    ++pull_.in_flight;
    return Status::ok();
}

Status RemoteRange::finish_read(unsigned slot) {
    while (!slots_[slot].ready) {
        if (!slots_[slot].pending)
            return Status::error("remote read from node " + std::to_string(node_) +
                                 ": waited for a read never issued");
        SORTAPP_TRY(pull_.reap());
    }
    return Status::ok();
}

Status RemoteRange::complete(unsigned slot, const msg_completion_t &c) {
    Slot &s = slots_[slot];
    s.pending = false;
    if (c.status != RIO_OK || c.bytes != s.bytes)
        return Status::error("remote read from node " + std::to_string(node_) + " failed: " +
                             (c.status == MSG_ERR_PEER_FAILED ? "the node exited or was killed"
                                                              : rio_strerror(c.status)));
    s.ready = true;
    return Status::ok();
}

Pull::~Pull() {
    msg_completion_t c;
    while (in_flight > 0 && msg_cq_wait(cq, stall_ms, &c) == MSG_OK) --in_flight;
    if (in_flight == 0) {
        msg_cq_destroy(cq);
        return;
    }
    // Deliberately kept: freeing them would let a late read write into freed memory.
    static std::mutex mu;
    static std::vector<RecordStreams> *abandoned = new std::vector<RecordStreams>;
    std::lock_guard<std::mutex> lk(mu);
    abandoned->push_back(std::move(streams));
}

Status Pull::open(const RecordFormat &format, const MergeOrder &order, size_t block,
                  unsigned depth) {
    const size_t R = format.record_size, sources = order.handles.size();
    for (size_t i = 0; i < sources; ++i) {
        auto range = std::make_unique<RemoteRange>(*this, int(i), order.handles[i]);
        ranges_.push_back(range.get());
        streams.push_back(std::make_unique<RecordStream>(
            std::move(range), format, order.first[i] * R, order.last[i] * R, block, depth));
    }
    return start_streams(streams);
}

Status Pull::reap() {
    msg_completion_t c;
    int rc = msg_cq_wait(cq, stall_ms, &c);
    if (rc == MSG_ERR_TIMEOUT) return stalled();
    if (rc != MSG_OK)
        return Status::error(std::string("waiting for remote reads: ") + msg_strerror(rc));
    auto *t = static_cast<Tag *>(c.cookie);
    --in_flight;
    SORTAPP_TRY(t->range->complete(t->slot, c));
    if (t->range->node() == self)
        bytes_local += c.bytes;
    else
        bytes_received += c.bytes;
    return Status::ok();
}

Status Pull::stalled() const {
    std::string who;
    for (const RemoteRange *r : ranges_)
        if (r->waiting()) who.append(who.empty() ? "" : ", ").append(std::to_string(r->node()));
    return Status::error("no remote read completed for " + std::to_string(stall_ms / 1000) +
                         " s; waiting on node(s) " + who + " (stopped or unreachable?)");
}

// Merges the pull's started streams into `out`, written through a ring of buffers.
Status merge_into(const RecordFormat &format, const MergeOrder &order, Pull &pull, File &out,
                  uint64_t &merged, const std::function<void(uint64_t, uint64_t)> &progress) {
    IoRing ring;
    SORTAPP_TRY(ring.init(8));
    SequentialWriter writer(ring, out, 4u << 20, 3);
    const size_t R = format.record_size;
    uint64_t total = 0;
    for (size_t i = 0; i < order.handles.size(); ++i) total += (order.last[i] - order.first[i]) * R;
    SORTAPP_TRY(out.reserve(total));
    std::function<void(uint64_t)> report;
    if (progress) report = [&](uint64_t bytes) { progress(bytes, total); };
    SORTAPP_TRY(merge_streams(format, pull.streams, writer, uint64_t(0x4000) * R, report, merged));
    return writer.finish(true);
}

}  // namespace

Status remote_merge(rio_t *rio, msg_context_t *msg, int self, const RecordFormat &format,
                    const MergeOrder &order, const MergeSettings &settings,
                    RemoteMergeResult &result,
                    const std::function<void(uint64_t, uint64_t)> &progress) {
    msg_cq_t *cq = nullptr;
    if (msg_cq_create(msg, &cq) != MSG_OK) return Status::error("cannot create a completion queue");
    // Declared first, so destroyed last: its destructor waits for the reads still in flight.
    Pull pull(rio, cq, self, settings.stall_ms);
    // Returns with every source's first block in hand (the streams round the block down to
    // whole records and read through two buffers at least).
    SORTAPP_TRY(pull.open(format, order, settings.block, settings.depth));

    PendingFile out;
    SORTAPP_TRY(out.create(settings.output, true, settings.temp_tag));
    uint64_t merged = 0;
    SORTAPP_TRY(merge_into(format, order, pull, out.file, merged, progress));
    SORTAPP_TRY(pull.drain());
    result.records = merged / format.record_size;
    result.bytes_received = pull.bytes_received;
    result.bytes_local = pull.bytes_local;
    result.pending_output = out.keep();
    return Status::ok();
}

}  // namespace sortapp::cluster
