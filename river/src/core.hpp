// What a river's source and sink share: its settings, one lock over all
// state, the first error, the counters, and issuing libmsg operations whose
// completions come back through the river's callback CQ.
//
// The CQ's callback runs under libmsg's own lock and takes `mu`; so nothing
// calls libmsg while holding `mu`.
#pragma once

#include <msg/msg.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "river/river.h"
#include "wire.hpp"

namespace riv {

using Clock = std::chrono::steady_clock;

// Who the river's members are and where this rank stands.
struct Layout {
    std::vector<int> sources, sinks;                // ranks, by index
    std::vector<int> source_of_rank, sink_of_rank;  // index by rank, -1 if none
    int my_source = -1, my_sink = -1;
    uint64_t hash = 0;  // ranks, tag and sizes: hellos compare it
};

struct Settings {
    size_t record_size = 0;
    size_t batch_records = 0;
    size_t batch_bytes = 0;  // records only
    size_t slot_bytes = 0;   // records and trailer
    int credits = 0;
    int tag = 0;
    int timeout_ms = 0;
    river_pick_fn pick = nullptr;
    void *pick_arg = nullptr;
    river_place_fn place = nullptr;  // null: the sink's own buffers
    void *place_arg = nullptr;
    Layout layout;
};

// What each completion's cookie points at.
enum class OpKind : uint8_t {
    BatchSend,
    BatchRecv,
    SourceControlRecv,
    SinkControlRecv,
    ControlSend
};
struct Op {
    OpKind kind;
    int link = 0;  // the peer's index among sinks (source side) or sources (sink side)
    int slot = 0;
};

// Counters under Core::mu; river_stats_t is filled from them.
struct Counters {
    river_stats_t s{};
    uint64_t source_bytes_now = 0;
    uint64_t sink_batches_now = 0;
};

class Core {
  public:
    Core(msg_context_t *m, Settings st) : msg(m), settings(std::move(st)) {}

    // The first error sticks: later puts and gets return it. Call with mu held.
    void fail(int status, int rank, std::string text);
    // The error, or 0; lock-free for the put and get fast paths.
    int error() const { return error_flag.load(std::memory_order_acquire); }

    // A completed control receive from `peer` (named so in errors), by the checks sources and
    // sinks share: `lost()` when the peer failed, `apply(m)` (null, or why the message is
    // wrong) when it is a valid message. True with *why set: reject the message; true with
    // *why null: it was applied; false: nothing more to do (canceled; the peer failed; the
    // receive failed, which is the river's error now). Call with mu held.
    template <class Lost, class Apply>
    bool take_control(const msg_completion_t &c, const Control &m, uint32_t from_index,
                      bool to_source, int peer, const std::string &name, Lost lost, Apply apply,
                      const char **why) {
        *why = nullptr;
        if (c.status == MSG_ERR_CANCELED) return false;
        if (c.status == MSG_ERR_PEER_FAILED) {
            lost();
            return false;
        }
        if (c.status == MSG_ERR_TRUNCATED) {
            *why = "longer than a control message";
            return true;
        }
        if (c.status != MSG_OK) {
            fail(c.status, peer, "receiving from " + name + ": " + msg_strerror(c.status));
            return false;
        }
        *why = check_control(m, c.bytes, from_index, to_source);
        if (*why == nullptr) *why = apply(m);
        return true;
    }

    // libmsg operations bound to the river's CQ, counted while in flight. A
    // refused one is counted back and becomes the river's error. Never with mu held.
    int isend(int dest, int tag_offset, const void *buf, size_t len, Op *op);
    int irecv(int source, int tag_offset, void *buf, size_t capacity, Op *op);

    msg_context_t *const msg;
    msg_cq_t *cq = nullptr;
    const Settings settings;

    std::mutex mu;
    std::condition_variable cv;
    Counters counters;
    std::atomic<long> in_flight{0};
    Clock::time_point last_progress = Clock::now();  // a completion arrived
    int error_rank = -1;
    std::string error_text;
    Op control_send{OpKind::ControlSend};

  private:
    std::atomic<int> error_flag{0};
};

// The hello both ends send at open: the settings every rank must share.
Control make_hello(const Settings &s, uint32_t from_index);
// Null if a peer's hello carries this river's settings, else which one differs.
const char *hello_differs(const Settings &s, const Control &m);

// Time since `start` in ns, for the blocked-time counter.
inline uint64_t ns_since(Clock::time_point start) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

}  // namespace riv
