// A river's sink end: per source, `credits` receive buffers (slots), the
// batches that arrived in them handed out in the source's order, a credit
// granted back for each one released, and the source's last word (end or
// abort) answered once everything it sent has arrived.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core.hpp"
#include "wire.hpp"

namespace riv {

class Sink {
  public:
    explicit Sink(Core &core);
    Sink(const Sink &) = delete;
    Sink &operator=(const Sink &) = delete;

    // river_open: posts every slot and the control receives, greets the sources
    // (the hello carries their first credits).
    int start();
    // Under mu: every source's hello has arrived.
    bool greeted() const;

    int get_batch(river_batch_t *batch, int timeout_ms);
    int release(river_batch_t *batch);
    int get(void *record);

    // river_close: tells the sources whose flow has not ended.
    void begin_close();
    // Under mu: every source has had its last word and all it sent arrived (or failed).
    bool settled() const;
    bool has_deferred() const;
    // Sends the finished messages that are due. No mu.
    void send_deferred();

    // Completions, under mu.
    void on_batch(const msg_completion_t &c, const Op &op);
    void on_control(const msg_completion_t &c, const Op &op);

  private:
    enum class SlotState : uint8_t { Posted, Ready, Held, Idle };
    struct Slot {
        uint8_t *mem = nullptr;
        SlotState state = SlotState::Idle;
        uint64_t seq = 0;
        size_t count = 0;
        Op op{OpKind::BatchRecv};
    };
    struct Link {
        int rank = -1;
        std::vector<Slot> slots;
        uint64_t next = 0;  // the next batch (seq) to hand out
        uint64_t arrived = 0, records_arrived = 0;
        int ready = 0, held = 0;
        Control rx[2]{};  // hello, then end or abort
        Op rx_op[2]{};
        Control answer{};  // finished or closed
        uint64_t announced = 0, announced_records = 0;
        bool hello = false, last = false, aborted = false, failed = false;
        bool finish_due = false, answered = false, closed_sent = false;
    };
    struct FreeDeleter {
        void operator()(uint8_t *p) const { std::free(p); }
    };

    uint8_t *placement(size_t li, Slot &s) const;
    bool complete(const Link &l) const { return l.last && l.arrived == l.announced; }
    bool drained(const Link &l) const { return complete(l) && l.next == l.announced; }
    Slot *deliverable(Link &l);
    bool any_deliverable();
    bool all_drained() const;
    bool take(river_batch_t *batch);
    int get_batch_locked(river_batch_t *batch, int timeout_ms);
    int release_locked(river_batch_t *batch);
    void answer(Link &l, ControlKind kind);
    void link_failed(Link &l);
    void reject(Link &l, int status, std::string text);
    void check_complete(Link &l);
    const char *check_seq(const Link &l, uint64_t seq) const;
    const char *apply(Link &l, const Control &m);

    Core &core_;
    const Settings &st_;
    std::unique_ptr<uint8_t, FreeDeleter> memory_;
    std::vector<Link> links_;
    std::mutex get_mu_;   // the cursor of river_get; before send_mu_
    std::mutex send_mu_;  // a source's grants leave before its finished; before mu
    river_batch_t cursor_{};
    size_t cursor_pos_ = 0;
    bool have_cursor_ = false;
    size_t turn_ = 0;  // the source to look at first
    int finish_due_ = 0;
    Control hello_{}, grant_{};
};

}  // namespace riv
