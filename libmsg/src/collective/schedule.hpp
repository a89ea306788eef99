// A collective as data: rounds of messages with one peer each, every message
// of a round in flight at once, then the round's local work (a reduction, a
// copy) before the next round starts. Each algorithm file builds one.
//
// Schedules are kept for reuse (CollectiveSet's pool): clear() empties one
// but keeps its rounds, messages and small scratch buffers, and a round's
// work is held inline, so a small collective allocates nothing once the
// context has run a few.
#pragma once

#include <cassert>
#include <cstddef>
#include <deque>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace msg {

struct CollMessage {
    enum State { Idle, Posted, Done, Canceled };
    bool send = false;
    int peer = 0;
    char *buf = nullptr;
    size_t len = 0;
    State state = Idle;
};

// A round's local work: any callable of up to kBytes, stored in place.
class Step {
  public:
    static constexpr size_t kBytes = 64;

    Step() = default;
    Step(const Step &) = delete;
    Step &operator=(const Step &) = delete;
    ~Step() { clear(); }

    template <typename F>
    Step &operator=(F f) {
        static_assert(sizeof(F) <= kBytes, "a round's work captures too much: raise Step::kBytes");
        static_assert(alignof(F) <= alignof(std::max_align_t));
        clear();
        new (store_) F(std::move(f));
        run_ = [](void *p) { (*static_cast<F *>(p))(); };
        drop_ = [](void *p) { static_cast<F *>(p)->~F(); };
        return *this;
    }
    explicit operator bool() const { return run_ != nullptr; }
    void operator()() { run_(store_); }
    void clear() {
        if (drop_ != nullptr) drop_(store_);
        run_ = nullptr;
        drop_ = nullptr;
    }

  private:
    alignas(std::max_align_t) unsigned char store_[kBytes];
    void (*run_)(void *) = nullptr;
    void (*drop_)(void *) = nullptr;
};

// Messages first .. first + count - 1 of the schedule's list.
struct Round {
    size_t first = 0, count = 0;
    Step then;  // may be empty
};

class Schedule {
  public:
    // Scratch buffers up to this size are kept for the next collective.
    static constexpr size_t kKeptScratch = 64 * 1024;

    Schedule(int rank, int size) : rank(rank), size(size) {}
    Schedule(const Schedule &) = delete;
    Schedule &operator=(const Schedule &) = delete;

    // Empties it for another collective, keeping its memory but for large
    // scratch buffers, which go now.
    void clear() {
        for (size_t i = 0; i < rounds_used_; ++i) rounds_[i].then.clear();
        rounds_used_ = 0;
        messages_.clear();
        for (Scratch &b : buffers_)
            if (b.bytes > kKeptScratch) b = Scratch{};
        scratch_used_ = 0;
    }
    // A new round, to add messages and work to. Earlier rounds stay where
    // they are (a deque), so a reference to one outlives the next.
    Round &round() {
        if (rounds_used_ == rounds_.size()) rounds_.emplace_back();
        Round &r = rounds_[rounds_used_++];
        r.first = messages_.size();
        r.count = 0;
        return r;
    }
    // Messages go to the newest round.
    void send(Round &r, int peer, const void *buf, size_t len) {
        add(r, {true, peer, static_cast<char *>(const_cast<void *>(buf)), len});
    }
    void recv(Round &r, int peer, void *buf, size_t len) {
        add(r, {false, peer, static_cast<char *>(buf), len});
    }
    // Scratch memory that lives as long as the collective.
    char *scratch(size_t bytes) {
        if (scratch_used_ == buffers_.size()) buffers_.emplace_back();
        Scratch &b = buffers_[scratch_used_++];
        if (b.bytes < bytes || !b.data) {
            b.data = std::make_unique_for_overwrite<char[]>(bytes ? bytes : 1);
            b.bytes = bytes;
        }
        return b.data.get();
    }

    size_t rounds() const { return rounds_used_; }
    Round &round_at(size_t i) { return rounds_[i]; }
    CollMessage &message(size_t i) { return messages_[i]; }
    size_t messages() const { return messages_.size(); }

    int rank, size;

  private:
    struct Scratch {
        std::unique_ptr<char[]> data;
        size_t bytes = 0;
    };
    void add(Round &r, const CollMessage &m) {
        assert(r.first + r.count == messages_.size() && "messages go to the newest round");
        messages_.push_back(m);
        ++r.count;
    }

    std::deque<Round> rounds_;  // the first rounds_used_ are this collective's
    size_t rounds_used_ = 0;
    std::vector<CollMessage> messages_;
    std::vector<Scratch> buffers_;  // the first scratch_used_ are this collective's
    size_t scratch_used_ = 0;
};

}  // namespace msg
