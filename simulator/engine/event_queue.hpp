// The discrete-event core: events ordered by (time, sequence), so events at the same instant
// run in the order they were scheduled (deterministic runs). A calendar queue: almost every
// event of the model lands within a few microseconds of now, so time is cut into buckets of
// 2^kBucketShift picoseconds on a ring of kBuckets of them; a bucket is sorted only when the
// clock reaches it, and events beyond the ring wait in a 4-ary heap. Push and pop cost a
// constant amount of work instead of a heap's log(n) compares, and a bucket's events lie
// together in memory.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/time.hpp"

namespace sansim {

struct Event {
    Time time;
    std::uint64_t order;  // sequence number << 8 | kind: unique, so (time, order) is total
    std::uint32_t a;
    std::uint32_t b;

    std::uint32_t kind() const { return static_cast<std::uint32_t>(order & 0xFF); }
};

inline bool before(const Event &x, const Event &y) {
    return x.time < y.time || (x.time == y.time && x.order < y.order);
}

// A 4-ary min-heap of events: four children per node halve a binary heap's depth.
class EventHeap {
  public:
    void push(const Event &e);
    Event pop();
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    const Event &top() const { return heap_.front(); }

  private:
    std::vector<Event> heap_;
};

class EventQueue {
  public:
    static constexpr int kBucketShift = 12;                            // 4.096 ns buckets
    static constexpr std::uint64_t kBuckets = std::uint64_t{1} << 12;  // 16.8 us of ring

    EventQueue();

    // `t` must not be negative; `kind` must be below 256.
    void push(Time t, std::uint32_t kind, std::uint32_t a, std::uint32_t b) {
        const Event e{t, (next_seq_++ << 8) | kind, a, b};
        ++size_;
        const std::uint64_t bucket = bucket_of(t);
        if (bucket <= current_bucket_) {
            insert_current(e);
        } else if (bucket - current_bucket_ < kBuckets) {
            to_ring(e, bucket);
        } else {
            far_.push(e);
        }
    }
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    // The next event; the queue must not be empty.
    const Event &top() {
        if (cursor_ == current().size()) advance();
        return current()[cursor_];
    }
    Event pop() {
        if (cursor_ == current().size()) advance();
        --size_;
        return current()[cursor_++];
    }
    // The event `d` places after the next one if it is already known (in the current bucket),
    // else null: a hint for prefetching, not a promise (later pushes may come before it).
    const Event *ahead(std::size_t d) {
        std::vector<Event> &cur = current();
        return cursor_ + d < cur.size() ? &cur[cursor_ + d] : nullptr;
    }

  private:
    static constexpr std::uint64_t kWords = kBuckets / 64;

    static std::uint64_t bucket_of(Time t) { return static_cast<std::uint64_t>(t) >> kBucketShift; }
    std::vector<Event> &current() { return slots_[current_bucket_ & (kBuckets - 1)]; }
    void to_ring(const Event &e, std::uint64_t bucket) {
        const std::size_t slot = bucket & (kBuckets - 1);
        std::vector<Event> &v = slots_[slot];
        v.push_back(e);
        // The bucket's next line, for its next events: hundreds of buckets fill at once, more
        // streams of writes than the hardware's prefetcher follows.
        if (v.size() + 3 <= v.capacity()) __builtin_prefetch(v.data() + v.size() + 3, 1);
        occupied_[slot / 64] |= std::uint64_t{1} << (slot % 64);
    }
    void insert_current(const Event &e);
    void advance();
    static constexpr std::size_t kRadixMin = 64;  // smaller buckets are sorted by comparison
    void sort_current();
    static void radix_pass(const std::vector<Event> &from, std::vector<Event> &to, unsigned shift);

    // slots_[b % kBuckets] holds bucket b's events for current_bucket_ <= b <
    // current_bucket_ + kBuckets, in no order except for the current bucket: that one also
    // holds anything scheduled at or before it, is sorted, and has run up to cursor_.
    std::vector<std::vector<Event>> slots_;
    std::vector<std::uint64_t> occupied_;  // a bit per non-empty slot, the current one aside
    std::uint64_t current_bucket_ = 0;
    std::size_t cursor_ = 0;
    EventHeap far_;
    std::size_t size_ = 0;
    std::uint64_t next_seq_ = 0;
    std::vector<Event> scratch_;  // the radix sort's other buffer
};

}  // namespace sansim
