// The discrete-event core: a binary heap of small plain events ordered by (time, sequence),
// so events at the same instant run in the order they were scheduled (deterministic runs).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/time.hpp"

namespace sansim {

struct Event {
    Time time;
    std::uint64_t seq;
    std::uint32_t kind;
    std::uint32_t a;
    std::uint64_t b;
};

class EventQueue {
public:
    void push(Time t, std::uint32_t kind, std::uint32_t a, std::uint64_t b) {
        heap_.push_back(Event{t, next_seq_++, kind, a, b});
        sift_up(heap_.size() - 1);
    }
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    const Event &top() const { return heap_.front(); }
    Event pop() {
        Event e = heap_.front();
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
        return e;
    }

private:
    static bool before(const Event &x, const Event &y) {
        return x.time < y.time || (x.time == y.time && x.seq < y.seq);
    }
    void sift_up(std::size_t i) {
        Event e = heap_[i];
        while (i > 0) {
            std::size_t p = (i - 1) / 2;
            if (!before(e, heap_[p])) break;
            heap_[i] = heap_[p];
            i = p;
        }
        heap_[i] = e;
    }
    void sift_down(std::size_t i) {
        Event e = heap_[i];
        const std::size_t n = heap_.size();
        for (;;) {
            std::size_t c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
            if (!before(heap_[c], e)) break;
            heap_[i] = heap_[c];
            i = c;
        }
        heap_[i] = e;
    }

    std::vector<Event> heap_;
    std::uint64_t next_seq_ = 0;
};

}  // namespace sansim
