// The discrete-event core: events ordered by (time, sequence), so events at the same instant
// run in the order they were scheduled (deterministic runs). A calendar queue: almost every
// event of the model lands within a few microseconds of now, so time is cut into buckets of
// kBucketPs picoseconds on a ring covering kBuckets of them; a bucket is sorted only when the
// clock reaches it, and events beyond the ring wait in a 4-ary heap. Push and pop cost a
// constant amount of work instead of a heap's log(n) compares.
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
    static constexpr int kBucketShift = 11;  // 2.048 ns buckets
    static constexpr std::uint64_t kBuckets = std::uint64_t{1} << 15;  // 67 us of ring

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
        if (cursor_ == current_.size()) advance();
        return current_[cursor_];
    }
    Event pop() {
        if (cursor_ == current_.size()) advance();
        --size_;
        return current_[cursor_++];
    }

private:
    struct Node {
        Event event;
        std::uint32_t next;
    };
    static constexpr std::uint32_t kNil = 0xFFFFFFFFu;
    static constexpr std::uint64_t kWords = kBuckets / 64;

    static std::uint64_t bucket_of(Time t) { return static_cast<std::uint64_t>(t) >> kBucketShift; }
    void to_ring(const Event &e, std::uint64_t bucket) {
        const std::size_t slot = bucket & (kBuckets - 1);
        std::uint32_t n;
        if (free_ != kNil) {
            n = free_;
            free_ = nodes_[n].next;
        } else {
            n = static_cast<std::uint32_t>(nodes_.size());
            nodes_.emplace_back();
        }
        nodes_[n].event = e;
        nodes_[n].next = head_[slot];
        head_[slot] = n;
        occupied_[slot / 64] |= std::uint64_t{1} << (slot % 64);
    }
    void insert_current(const Event &e);
    void advance();

    // Events of buckets up to current_bucket_, sorted; those before cursor_ have been run.
    std::vector<Event> current_;
    std::size_t cursor_ = 0;
    std::uint64_t current_bucket_ = 0;
    // Ring: bucket b (current_bucket_ < b < current_bucket_ + kBuckets) is a list of nodes
    // from head_[b % kBuckets]; occupied_ has a bit per non-empty slot.
    std::vector<std::uint32_t> head_;
    std::vector<std::uint64_t> occupied_;
    std::vector<Node> nodes_;
    std::uint32_t free_ = kNil;
    EventHeap far_;
    std::size_t size_ = 0;
    std::uint64_t next_seq_ = 0;
};

}  // namespace sansim
