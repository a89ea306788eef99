// A mutex with a timed lock that ThreadSanitizer understands: std::timed_mutex
// uses pthread_mutex_clocklock, which GCC 12's sanitizer does not intercept,
// so it reports races that are not there. pthread_mutex_timedlock it knows.
#pragma once

#include <pthread.h>
#include <time.h>

#include <chrono>

namespace msg {

class TimedMutex {
  public:
    TimedMutex() { pthread_mutex_init(&m_, nullptr); }
    ~TimedMutex() { pthread_mutex_destroy(&m_); }
    TimedMutex(const TimedMutex &) = delete;
    TimedMutex &operator=(const TimedMutex &) = delete;

    void lock() { pthread_mutex_lock(&m_); }
    void unlock() { pthread_mutex_unlock(&m_); }
    bool try_lock() { return pthread_mutex_trylock(&m_) == 0; }

    template <typename Rep, typename Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period> &d) {
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        ts.tv_sec += static_cast<time_t>(ns / 1000000000);
        ts.tv_nsec += static_cast<long>(ns % 1000000000);
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec += 1;
            ts.tv_nsec -= 1000000000;
        }
        return pthread_mutex_timedlock(&m_, &ts) == 0;
    }

  private:
    pthread_mutex_t m_;
};

}  // namespace msg
