// Samples viaduct::CounterSample at a fixed rate on a thread of its own into a bounded ring:
// a node's counters over time (the NOW-Sort paper samples 10 times a second).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "viaduct/clock.hpp"
#include "viaduct/counters.hpp"

namespace viaduct {

// The rates a program's --sample-hz may ask for (the paper's cpubar ran at 5-10 a second).
inline constexpr double kMinSampleHz = 0.1, kMaxSampleHz = 100;

// A ring that holds an hour at `rate_hz` (at least 16 samples, at most kHourRingSamples, about
// 6 MB: an hour at 10 a second); a longer run keeps its last hour.
inline constexpr std::size_t kHourRingSamples = 36000;
inline std::size_t ring_for_an_hour(double rate_hz) {
    const double hour = rate_hz * 3600;
    return hour < 16                                      ? 16
           : hour > static_cast<double>(kHourRingSamples) ? kHourRingSamples
                                                          : static_cast<std::size_t>(hour);
}

class Sampler {
  public:
    // What the program says of itself at a sample: its phase (an index into its own table of
    // phase names) and the work done so far (cumulative, like the counters).
    struct Progress {
        uint32_t phase = 0;
        uint64_t records = 0;
        uint64_t bytes = 0;
        uint64_t net_sent_bytes = 0;
        uint64_t net_received_bytes = 0;
    };
    // Called for every sample: on the sampler's thread, and on the threads that call start(),
    // stop() and sample_now(), so it must be safe to call from any thread (atomics). An empty
    // function leaves the fields 0. What it throws ends the sampling and comes out of stop().
    using ProgressFn = std::function<Progress()>;

    static constexpr double kMaxRateHz = 1000;

    // rate_hz in (0, kMaxRateHz], capacity >= 2 samples, block_device a /sys/block name or ""
    // (see block_device_for); std::invalid_argument naming the value otherwise.
    Sampler(double rate_hz, std::size_t capacity, std::string block_device, ProgressFn progress);
    ~Sampler();  // stops, dropping whatever error the thread had
    Sampler(const Sampler &) = delete;
    Sampler &operator=(const Sampler &) = delete;

    // Takes a first sample now, then one per period on the sampler's thread, on a fixed
    // timeline: ticks missed while the host was too busy are skipped, not made up in a burst.
    // Does nothing while already started.
    void start();
    // Wakes and joins the sampler's thread at once, then takes a last sample. Does nothing when
    // not started. Rethrows what the progress function threw on the sampler's thread.
    void stop();
    // Takes a sample now, on the calling thread, and adds it to the ring.
    CounterSample sample_now();
    // From now on each sample counts the CPU time of this process's job mates on this host
    // (JobMates, looked for now: call it once every process of the job has started), so that
    // the job's own processes are not "other processes" in its rates. For the processes of a
    // distributed job only: a program run from a shell has no job mates, but siblings.
    void count_job_mates();

    // The ring's samples, oldest first.
    std::vector<CounterSample> samples() const;
    // Samples by number: the n-th sample taken is number n, from 0 (those pushed out of the ring
    // are numbers below dropped()). Up to `max` samples from number `first` on (from the oldest
    // the ring still holds when `first` is older), oldest first, read in one step under the
    // ring's lock; *from says the number of the first returned, *end one past the newest taken.
    std::vector<CounterSample> samples_from(uint64_t first, std::size_t max, uint64_t *from,
                                            uint64_t *end) const;
    // The newest sample; none before the first.
    std::optional<CounterSample> latest() const;
    // Samples pushed out of the full ring, oldest first, since construction.
    uint64_t dropped() const;

    double rate_hz() const { return rate_hz_; }
    std::size_t capacity() const { return capacity_; }
    const std::string &block_device() const { return block_device_; }

  private:
    void run(Clock::time_point first_tick);
    void halt();
    void push(const CounterSample &s);

    const double rate_hz_;
    const Clock::duration period_;
    const std::string block_device_;
    const ProgressFn progress_;

    // Serialises whole samples, so the ring is in the order the samples were read.
    std::mutex sampling_;
    std::optional<JobMates> mates_;  // guarded by sampling_

    const std::size_t capacity_;
    mutable std::mutex ring_mutex_;
    std::vector<CounterSample> ring_;  // grows to capacity_, then wraps
    std::size_t next_ = 0;             // where the next sample goes
    std::size_t count_ = 0;            // samples held, up to capacity_
    uint64_t dropped_ = 0;

    // Held through start() and stop(), so one never sees the other half done.
    std::mutex lifecycle_;
    // The sampler thread's stop request, waited for between ticks.
    std::mutex control_;
    std::condition_variable wake_;
    bool stop_requested_ = false;
    std::exception_ptr thread_error_;
    std::thread thread_;
};

}  // namespace viaduct
