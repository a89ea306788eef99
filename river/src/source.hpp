// A river's source end: per sink, the batch being filled and the batches in
// flight (at most credits + 1 buffers), the credits the sink has granted, and
// the control messages from the sink (hello, grants, its last word).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core.hpp"
#include "wire.hpp"

namespace riv {

class Source {
  public:
    explicit Source(Core &core);
    Source(const Source &) = delete;
    Source &operator=(const Source &) = delete;

    // river_open: posts the receives for the sinks' control messages, greets them.
    int start();
    // Under mu: every sink's hello (its first credits) has arrived.
    bool greeted() const;

    int put(const void *record, bool may_block);
    int put_records(const uint8_t *records, size_t count);
    int put_to(int sink, const uint8_t *records, size_t count);
    int flush();
    int end();

    // river_close: aborts the flow where it has not ended.
    void begin_close();
    // Under mu: every sink has had its last word (or failed).
    bool settled() const;
    // Under mu: something waits to be sent by send_deferred.
    bool has_deferred() const;
    // Reposts control receives and sends aborts a sink's close asked for. No mu.
    void send_deferred();

    // Completions, under mu.
    void on_batch_sent(const msg_completion_t &c, const Op &op);
    void on_control(const msg_completion_t &c, const Op &op);

    uint64_t records_put() const { return records_put_.load(std::memory_order_relaxed); }

  private:
    struct OutBatch {
        std::unique_ptr<uint8_t[]> mem;  // allocated on first use
        size_t count = 0;                // records in it (put thread)
        bool busy = false;               // filling or sending (mu)
        Op op{OpKind::BatchSend};
    };
    struct Link {
        int rank = -1;
        std::unique_ptr<OutBatch[]> pool;  // credits + 1
        OutBatch *filling = nullptr;       // put thread
        int credits = 0;                   // batches it may still send
        int unreturned = 0;                // sent, not yet granted back
        uint64_t seq = 0, records = 0;     // sent so far
        std::unique_ptr<Control[]> rx;     // credits + 2 posted receives
        std::unique_ptr<Op[]> rx_op;
        std::vector<int> repost;
        Control last_msg{};  // end or abort
        bool hello = false, finished = false, closed = false, failed = false;
        bool end_sent = false, abort_sent = false, abort_due = false;
    };
    enum class Need { Room, ShipIfCredit, Flush };

    int append(Link &l, const uint8_t *records, size_t n, bool may_block);
    int advance(Link &l, Need need, bool may_block);
    int await(std::unique_lock<std::mutex> &lk, Link &l, Need need, bool may_block,
              OutBatch **ship);
    bool take_credit(Link &l, OutBatch **ship);
    OutBatch *free_batch(Link &l);
    int ship(Link &l, OutBatch *b);
    int flush_locked();
    bool send_last(Link &l, ControlKind kind);
    void link_failed(Link &l);
    void reject(Link &l, int status, std::string text);
    const char *apply(Link &l, const Control &m);

    Core &core_;
    const Settings &st_;
    std::mutex put_mu_;  // one putting thread at a time; before mu
    std::vector<Link> links_;
    Control hello_{};
    bool ended_ = false;
    int deferred_ = 0;  // reposts and aborts waiting (mu)
    std::atomic<uint64_t> records_put_{0};
};

}  // namespace riv
