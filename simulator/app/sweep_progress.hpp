// A sweep's progress line on stderr: runs done of all and the pace, in runs per second, or
// in seconds per run once a run takes a second or more (a rate would then read "0 runs/s").
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace sansim {

// "3/12 runs, 2.40 s per run" or "30/120 runs, 15.0 runs/s"; the pace is left out until a
// run has finished.
std::string sweep_pace(std::size_t done, std::size_t total, double seconds);

class SweepProgress {
  public:
    // `enabled`: no --quiet or --json; the line is drawn only on a terminal, and only once the
    // sweep has taken a second, so short sweeps and logs stay clean.
    SweepProgress(std::size_t total, bool enabled);
    SweepProgress(const SweepProgress &) = delete;
    SweepProgress &operator=(const SweepProgress &) = delete;
    ~SweepProgress() { finish(); }
    void update(std::size_t done);
    // Clears the line, so what follows starts on a clean one.
    void finish();

  private:
    using Clock = std::chrono::steady_clock;
    std::size_t total_;
    bool enabled_, shown_ = false;
    Clock::time_point start_;
};

}  // namespace sansim
