// One progress line on stderr for long work: "TOOL:  42% 1.20M/2.90M records, 310.00k records/s".
// Shown only where a person watches (stderr a terminal, no --quiet/--json) and only once the
// work has taken a second, so short runs and logs stay clean.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace viaduct {

class Progress {
  public:
    // `enabled`: the caller's --quiet/--json said nothing against it; the terminal check is here.
    Progress(std::string tool, std::string unit, unsigned long long total, bool enabled)
        : tool_(std::move(tool)),
          unit_(std::move(unit)),
          total_(total),
          enabled_(enabled && isatty(STDERR_FILENO) == 1),
          start_(Clock::now()),
          last_(start_) {}
    Progress(const Progress &) = delete;
    Progress &operator=(const Progress &) = delete;
    ~Progress() { finish(); }

    // `done` of total so far; redraws at most five times a second.
    void update(unsigned long long done) {
        if (!enabled_) return;
        const auto now = Clock::now();
        if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200))
            return;
        last_ = now;
        const double seconds = std::chrono::duration<double>(now - start_).count();
        const double percent = total_ > 0 ? 100.0 * double(done) / double(total_) : 100.0;
        std::fprintf(stderr, "\r%s: %3.0f%% %s/%s %s, %s %s/s   ", tool_.c_str(), percent,
                     human(double(done)).c_str(), human(double(total_)).c_str(), unit_.c_str(),
                     human(double(done) / seconds).c_str(), unit_.c_str());
        std::fflush(stderr);
        shown_ = true;
    }

    // Clears the line, so what follows starts on a clean one.
    void finish() {
        if (!shown_) return;
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        shown_ = false;
    }

  private:
    // 1234567 as "1.23M": decimal multiples, a glance rather than a count.
    static std::string human(double v) {
        char text[32];
        const char *units[] = {"", "k", "M", "G", "T"};
        int u = 0;
        while (v >= 1000 && u < 4) v /= 1000, ++u;
        std::snprintf(text, sizeof text, u == 0 ? "%.0f%s" : "%.2f%s", v, units[u]);
        return text;
    }

    using Clock = std::chrono::steady_clock;
    std::string tool_, unit_;
    unsigned long long total_;
    bool enabled_, shown_ = false;
    Clock::time_point start_, last_;
};

}  // namespace viaduct
