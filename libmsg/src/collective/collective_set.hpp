// A context's collectives: the sequence number that gives each its tag, the
// ones in flight, the user reductions, and the hooks the API calls under the
// fabric lock (after each engine pass, on a peer's failure, at finalize).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "collective/collective.hpp"
#include "collective/reduction.hpp"

namespace msg {

class CollectiveSet {
  public:
    // Tags: MSG_TAG_COLLECTIVE_FIRST + the sequence number modulo this.
    static constexpr uint64_t kTags = uint64_t{1} << 29;

    // The fabric lock is held for all of these.
    // Starts a collective on the next tag. MSG_ERR_PEER_FAILED, with nothing
    // reported, once any peer has failed (the tag is used up all the same,
    // so every rank's numbering stays in step).
    int start(Engine &engine, std::unique_ptr<Schedule> schedule, Collective::Report report);
    // An empty schedule for this rank and size, from those kept for reuse
    // (their own lock: schedules are built without the fabric lock).
    std::unique_ptr<Schedule> new_schedule(int rank, int size);
    // Moves every collective with completions to take; frees finished ones.
    void run();
    // A peer failed: every open collective fails with MSG_ERR_PEER_FAILED.
    void peer_failed();
    // Finalize: the engine is completing everything; no receive is posted any more.
    void close() { host_.closing = true; }
    uint64_t next_seq() const { return next_seq_; }

    // User reductions (their own lock: no fabric lock needed).
    int create_reduction(msg_reduce_fn fn, void *arg, int *op);
    int free_reduction(int op);
    // The reduction for (datatype, op): a built-in or a registered one.
    int find_reduction(int datatype, int op, Reduction *out) const;

  private:
    class DrainSink final : public CompletionSink {
      public:
        void deliver(const msg_completion_t &) override {}
    };
    // Finished collectives and their schedules are kept, up to kKept of each.
    static constexpr size_t kKept = 8;
    void finished(Collective *c);

    DrainSink drain_;
    Collective::Host host_;
    uint64_t next_seq_ = 0;
    std::vector<std::unique_ptr<Collective>> active_, spare_;
    std::mutex schedules_mu_;
    std::vector<std::unique_ptr<Schedule>> schedules_;

    struct UserReduction {
        msg_reduce_fn fn = nullptr;
        void *arg = nullptr;
    };
    mutable std::mutex reductions_mu_;
    std::vector<UserReduction> reductions_;  // code kUserFirst + index; fn null: free
};

// Codes msg_reduction_create hands out start here.
constexpr int kUserReductionFirst = 0x100;

}  // namespace msg
