// The river's messages on libmsg: a batch (records, then a trailer that says
// whose and how many they are) and the control messages between a source and
// a sink, with the checks every one passes before any field is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "river/river.h"

namespace riv {

constexpr uint32_t kBatchMagic = 0x52495642;    // "RIVB"
constexpr uint32_t kControlMagic = 0x52495643;  // "RIVC"
constexpr uint16_t kVersion = 1;

// Offsets from river_options_t.tag.
constexpr int kTagBatch = 0;     // source -> sink: batches
constexpr int kTagToSink = 1;    // source -> sink: hello, end, abort
constexpr int kTagToSource = 2;  // sink -> source: hello (the first credits), grant, finished,
                                 // closed

// The trailer follows the records, so the records start where the receive
// buffer starts (page-aligned: a sink can write them with O_DIRECT).
struct BatchTrailer {
    uint32_t magic;
    uint16_t version;
    uint16_t reserved0;
    uint32_t source_index;
    uint32_t sink_index;
    uint64_t seq;  // this source's batches to this sink, from 0
    uint64_t record_count;
    uint64_t record_size;
    uint64_t reserved[3];
};
static_assert(sizeof(BatchTrailer) == RIVER_TRAILER_BYTES);

enum class ControlKind : uint16_t {
    Hello = 1,     // both ways, at open: the settings (a sink's carries its credits)
    Grant = 2,     // sink -> source: `credits` batches released
    End = 3,       // source -> sink: `batches` and `records` sent in all
    Abort = 4,     // source -> sink: closed without end after `batches` batches
    Finished = 5,  // sink -> source: all `batches` (`records`) arrived; its last message
    Closed = 6     // sink -> source: closed before the flow ended; its last message
};

struct Control {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;
    uint32_t from_index;  // the sender's index: among the sinks (to a source) or sources
    uint32_t credits;
    uint64_t record_size;
    uint64_t batch_records;
    uint64_t batches;
    uint64_t records;
    uint64_t layout;  // hello: hash of the ranks, the tag and the sizes
    uint32_t nsources;
    uint32_t nsinks;
};
static_assert(sizeof(Control) == 64);

inline Control make_control(ControlKind kind, uint32_t from_index) {
    Control c{};
    c.magic = kControlMagic;
    c.version = kVersion;
    c.kind = static_cast<uint16_t>(kind);
    c.from_index = from_index;
    return c;
}

// Null if `bytes` received bytes at `msg` hold a well-formed batch for this
// sink from the source at source_index, else why not; *out gets the trailer.
inline const char *check_batch(const uint8_t *msg, size_t bytes, size_t record_size,
                               size_t batch_records, uint32_t source_index, uint32_t sink_index,
                               BatchTrailer *out) {
    if (bytes < sizeof(BatchTrailer)) return "shorter than a batch trailer";
    std::memcpy(out, msg + bytes - sizeof(BatchTrailer), sizeof(BatchTrailer));
    const BatchTrailer &t = *out;
    if (t.magic != kBatchMagic || t.version != kVersion) return "bad magic or version";
    if (t.reserved0 != 0 || t.reserved[0] != 0 || t.reserved[1] != 0 || t.reserved[2] != 0)
        return "reserved fields set";
    if (t.record_size != record_size) return "record size differs from the river's";
    if (t.source_index != source_index) return "names another source than its sender";
    if (t.sink_index != sink_index) return "addressed to another sink";
    if (t.record_count == 0 || t.record_count > batch_records) return "record count out of range";
    if (bytes - sizeof(BatchTrailer) != t.record_count * record_size)
        return "length does not match the record count";
    return nullptr;
}

// Null if `bytes` bytes hold a control message of a kind this end accepts,
// sent by the peer at from_index.
inline const char *check_control(const Control &c, size_t bytes, uint32_t from_index,
                                 bool to_source) {
    if (bytes != sizeof(Control)) return "not the size of a control message";
    if (c.magic != kControlMagic || c.version != kVersion) return "bad magic or version";
    if (c.from_index != from_index) return "names another sender than its own";
    const auto kind = static_cast<ControlKind>(c.kind);
    const bool for_source = kind == ControlKind::Hello || kind == ControlKind::Grant ||
                            kind == ControlKind::Finished || kind == ControlKind::Closed;
    const bool for_sink =
        kind == ControlKind::Hello || kind == ControlKind::End || kind == ControlKind::Abort;
    if (to_source ? !for_source : !for_sink) return "unknown kind";
    return nullptr;
}

}  // namespace riv
