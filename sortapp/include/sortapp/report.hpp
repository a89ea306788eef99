// Per-phase figures in the paper's "expectations" style: what each phase should take given the
// measured disk bandwidth, and what it took.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sortapp {

// printf into a string of whatever length the text needs (the reports' lines).
__attribute__((format(printf, 1, 2))) std::string printed(const char *format, ...);

struct PhaseReport {
    std::string name;         // "one-pass", "phase 1", "phase 2"
    std::uint64_t bytes = 0;  // input bytes the phase processed
    double seconds = 0;
    double cpu_seconds = 0;       // user + system, all threads
    double expected_seconds = 0;  // 0 when unknown
    bool stale = false;           // beat the expectation: the figure behind it is stale
    std::string note;

    double mb_per_s() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
    double cpu_percent() const { return seconds > 0 ? 100 * cpu_seconds / seconds : 0; }
    // CPU-seconds (user + system) per GB (10^9 bytes) of the phase's input; 0 for none.
    double cpu_per_gb() const { return bytes > 0 ? cpu_seconds / (bytes / 1e9) : 0; }
    double ratio() const { return expected_seconds > 0 ? seconds / expected_seconds : 0; }
    std::string to_text() const;
    std::string to_json() const;
};

// Wall clock and process CPU time at one moment.
struct Stopwatch {
    double wall = 0;
    double cpu = 0;
    static Stopwatch now();
};

// A progress bar on stderr, redrawn at most ten times a second; nothing when not a terminal.
class ProgressBar {
  public:
    explicit ProgressBar(bool enabled) : enabled_(enabled) {}
    void update(const char *phase, std::uint64_t done, std::uint64_t total);
    void finish();

  private:
    bool enabled_;
    double last_draw_ = 0;
    double phase_start_ = 0;
    std::string phase_;
    bool drawn_ = false;
};

}  // namespace sortapp
