// A mutex with a timed lock that ThreadSanitizer understands: std::timed_mutex
// uses pthread_mutex_clocklock, which GCC 12's sanitizer does not intercept,
// so it reports races that are not there. pthread_mutex_timedlock it knows.
#pragma once

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>

namespace msg {

class TimedMutex {
  public:
    TimedMutex() { pthread_mutex_init(&m_, nullptr); }
    ~TimedMutex() { pthread_mutex_destroy(&m_); }
    TimedMutex(const TimedMutex &) = delete;
    TimedMutex &operator=(const TimedMutex &) = delete;

    // Both locks count a waiter only when the mutex is taken: an uncontended
    // lock (most of them, on every call into libmsg) costs no more than before.
    void lock() {
        if (try_lock()) return;
        waiting_.fetch_add(1, std::memory_order_relaxed);
        pthread_mutex_lock(&m_);
        waiting_.fetch_sub(1, std::memory_order_relaxed);
    }
    void unlock() { pthread_mutex_unlock(&m_); }
    bool try_lock() { return pthread_mutex_trylock(&m_) == 0; }

    template <typename Rep, typename Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period> &d) {
        if (try_lock()) return true;
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        ts.tv_sec += static_cast<time_t>(ns / 1000000000);
        ts.tv_nsec += static_cast<long>(ns % 1000000000);
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec += 1;
            ts.tv_nsec -= 1000000000;
        }
        waiting_.fetch_add(1, std::memory_order_relaxed);
        bool got = pthread_mutex_timedlock(&m_, &ts) == 0;
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        return got;
    }

    // Threads blocked in lock() or try_lock_for() right now. A thread that
    // takes the mutex again and again (the progress thread) checks it and
    // steps aside, or an unfair mutex could keep a waiter out for good.
    int waiters() const { return waiting_.load(std::memory_order_relaxed); }

  private:
    pthread_mutex_t m_;
    std::atomic<int> waiting_{0};
};

}  // namespace msg
