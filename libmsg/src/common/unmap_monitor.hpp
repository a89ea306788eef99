// Watches address ranges for being unmapped, moved or discarded (munmap,
// mremap, madvise(MADV_DONTNEED) and what free() does with them), through
// userfaultfd's non-cooperative events. A registration cache asks it which
// ranges changed before it serves a kept registration: a buffer freed and
// mapped again at the same address must never be given the old
// registration, whose pinned pages are no longer the buffer's.
//
// The kernel holds a thread in munmap/madvise until the event has been read.
// A monitor thread reads events at once and publishes them under a mutex it
// holds from the read to the publish, so a caller that takes the mutex after
// its munmap returned always sees the change. The monitor thread allocates
// nothing (an allocator's free() could unmap a watched range and wait for
// the very thread that has to read the event).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace msg {

class UnmapMonitor {
  public:
    struct Range {
        uintptr_t begin = 0, end = 0;
    };

    UnmapMonitor() = default;
    ~UnmapMonitor();
    UnmapMonitor(const UnmapMonitor &) = delete;
    UnmapMonitor &operator=(const UnmapMonitor &) = delete;

    // Opens the userfaultfd and starts the monitor thread. False, with *why,
    // when the kernel refuses (no CONFIG_USERFAULTFD, or unprivileged with
    // vm.unprivileged_userfaultfd=0): the caller then keeps nothing.
    bool start(std::string *why);

    // Starts watching the pages under [begin, end). False if they cannot be
    // watched (a file mapping, a hole); the caller must not keep anything
    // that relies on them.
    bool watch(uintptr_t begin, uintptr_t end);

    // Calls fn(range) for every range changed since the last call, under the
    // monitor's lock: fn must not unmap memory or block. If more changed than
    // could be recorded, fn gets one range covering the whole address space.
    template <typename Fn>
    void drain(Fn &&fn) {
        // Always under the lock, never on a flag alone: a munmap may return
        // as soon as its event has been read, before the reader publishes it;
        // the reader holds the lock from before its read until after the
        // publish, so taking the lock orders us after it.
        std::lock_guard<std::mutex> lk(mu_);
        if (overflow_) {
            fn(Range{0, UINTPTR_MAX});
        } else {
            for (size_t i = 0; i < count_; ++i) fn(changed_[i]);
        }
        count_ = 0;
        overflow_ = false;
    }

    uint64_t events() const { return events_.load(std::memory_order_relaxed); }

  private:
    void run();
    // Reads and handles every event ready; called with mu_ held.
    void read_events();
    void record(uintptr_t begin, uintptr_t end);
    void unwatch(uintptr_t begin, uintptr_t end);

    static constexpr size_t kMaxChanged = 256;

    int uffd_ = -1;
    int stop_fd_ = -1;
    std::thread thread_;
    std::mutex mu_;
    Range changed_[kMaxChanged];
    size_t count_ = 0;
    bool overflow_ = false;
    std::atomic<uint64_t> events_{0};
};

}  // namespace msg
