// One collective in flight: runs its Schedule over the engine round by round
// on its own tag, and reports to the caller's CQ once. Its messages complete
// into it (it is their CompletionSink); CollectiveSet advances it afterwards,
// outside the engine's own call, always under the context's fabric lock.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "collective/schedule.hpp"
#include "protocol/engine.hpp"

namespace msg {

class Collective final : public CompletionSink {
  public:
    struct Report {
        CompletionSink *sink;  // the caller's CQ
        void *cookie;
        int source;    // the root, or MSG_ANY_SOURCE
        size_t bytes;  // written to this rank's receive buffer
        uint64_t seq;
    };
    // What every collective of a context shares (CollectiveSet owns it).
    struct Host {
        Engine *engine = nullptr;
        CompletionSink *drain = nullptr;  // absorbs the empty receives of failed ones
        std::deque<Collective *> ready;   // collectives with completions to take
        bool closing = false;             // finalize: the engine takes no new receive
    };
    Collective(Host &host, int tag, std::unique_ptr<Schedule> schedule, Report report);
    // Ready for another collective (kept by CollectiveSet for reuse).
    void reset(int tag, std::unique_ptr<Schedule> schedule, Report report);
    // The schedule, for reuse once this has finished.
    std::unique_ptr<Schedule> take_schedule() { return std::move(schedule_); }

    void deliver(const msg_completion_t &c) override;
    // Moves on as far as the completions so far allow. True once the caller
    // has its completion and no message of ours is in the engine any more.
    bool advance();
    // Ends it with `status`: unmatched receives withdrawn, the messages still
    // due to us absorbed by empty receives on the drain sink (so the peers'
    // sends finish), sends not yet made left out.
    void fail(int status);
    bool failed() const { return status_ != MSG_OK; }
    int status() const { return status_; }

    bool queued = false;  // in CollectiveSet's ready list

  private:
    void take(const msg_completion_t &c);
    void drain_inbox();
    void post_round();
    void post(CollMessage &m);

    void post_drains();
    void report(int status);

    Host &host_;
    int tag_;
    std::unique_ptr<Schedule> schedule_;  // never moved: its deque would allocate
    Report report_;
    std::vector<msg_completion_t> inbox_;  // taken from inbox_head_ on
    size_t inbox_head_ = 0;
    size_t round_ = 0;
    size_t round_left_ = 0;  // messages of the current round not done
    size_t posted_ = 0;      // messages in the engine
    int status_ = MSG_OK;
    bool round_open_ = false, reported_ = false, advancing_ = false;
};

}  // namespace msg
