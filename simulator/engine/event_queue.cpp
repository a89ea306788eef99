// The calendar queue's slow paths: moving to the next non-empty bucket, pulling far events
// into the ring as it turns, and keeping the current bucket sorted.
#include "engine/event_queue.hpp"

#include <algorithm>
#include <bit>

namespace sansim {
void EventHeap::push(const Event &e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
        const std::size_t p = (i - 1) / 4;
        if (!before(e, heap_[p])) break;
        heap_[i] = heap_[p];
        i = p;
    }
    heap_[i] = e;
}

Event EventHeap::pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    std::size_t i = 0;
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n) break;
        const std::size_t end = std::min(first + 4, n);
        std::size_t best = first;
        for (std::size_t c = first + 1; c < end; ++c)
            if (before(heap_[c], heap_[best])) best = c;
        if (!before(heap_[best], last)) break;
        heap_[i] = heap_[best];
        i = best;
    }
    heap_[i] = last;
    return top;
}

EventQueue::EventQueue() : slots_(kBuckets), occupied_(kWords, 0) {}

void EventQueue::insert_current(const Event &e) {
    // Rare: an event due within the bucket being run (or before it, after a peek past a time
    // limit). Its sequence number is the largest yet, so it goes after every event not later;
    // usually that is the end.
    std::vector<Event> &cur = current();
    const auto first = cur.begin() + static_cast<std::ptrdiff_t>(cursor_);
    cur.insert(std::upper_bound(first, cur.end(), e, before), e);
}

void EventQueue::advance() {
    // The current bucket is used up. Let go of the memory of an exceptional one (a million
    // messages set up at one instant) and keep the ordinary ones' for reuse.
    std::vector<Event> &done = current();
    if (done.capacity() > 4096)
        std::vector<Event>().swap(done);
    else
        done.clear();
    cursor_ = 0;
    // Find the next occupied slot after the current bucket, scanning the bitmap a word at a
    // time from the slot after it round the ring.
    std::uint64_t next = 0;
    bool found = false;
    const std::uint64_t start = (current_bucket_ + 1) & (kBuckets - 1);
    for (std::uint64_t step = 0; step <= kWords && !found; ++step) {
        const std::uint64_t word = (start / 64 + step) % kWords;
        std::uint64_t bits = occupied_[word];
        if (step == 0) bits &= ~std::uint64_t{0} << (start % 64);
        if (step == kWords) bits &= (std::uint64_t{1} << (start % 64)) - 1;
        if (bits == 0) continue;
        const std::uint64_t slot = word * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
        next = current_bucket_ + 1 + ((slot - start) & (kBuckets - 1));
        found = true;
    }
    if (!found) next = bucket_of(far_.top().time);  // ring empty: jump to the far events
    current_bucket_ = next;
    // The ring now reaches further: pull in far events that fall within it.
    while (!far_.empty() && bucket_of(far_.top().time) - current_bucket_ < kBuckets) {
        const Event e = far_.pop();
        to_ring(e, bucket_of(e.time));
    }
    const std::size_t slot = current_bucket_ & (kBuckets - 1);
    occupied_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    sort_current();
}

// A bucket's events arrive in sequence order, but for far events pulled in as the ring turns.
// Then a stable sort by time alone gives (time, sequence) order: a radix sort on the time's
// 12 bits within the bucket, 6 at a time, where a bucket is large. Otherwise, and for small
// buckets, a comparison sort (often skipped: many events scheduled for one instant, or one).
void EventQueue::sort_current() {
    std::vector<Event> &cur = current();
    const std::size_t n = cur.size();
    bool in_sequence = n >= kRadixMin;
    for (std::size_t i = 1; i < n && in_sequence; ++i)
        in_sequence = cur[i - 1].order < cur[i].order;
    if (!in_sequence) {
        const auto less = [](const Event &x, const Event &y) { return before(x, y); };
        if (!std::is_sorted(cur.begin(), cur.end(), less)) std::sort(cur.begin(), cur.end(), less);
        return;
    }
    static_assert(kBucketShift == 12, "two 6-bit passes cover a bucket");
    scratch_.resize(n);
    radix_pass(cur, scratch_, 0);
    radix_pass(scratch_, cur, 6);
}

void EventQueue::radix_pass(const std::vector<Event> &from, std::vector<Event> &to,
                            unsigned shift) {
    std::size_t start[65] = {};
    auto digit = [shift](const Event &e) {
        return (static_cast<std::uint64_t>(e.time) >> shift) & 63;
    };
    for (const Event &e : from) ++start[digit(e) + 1];
    for (std::size_t d = 1; d <= 64; ++d) start[d] += start[d - 1];
    for (const Event &e : from) to[start[digit(e)]++] = e;
}

}  // namespace sansim
