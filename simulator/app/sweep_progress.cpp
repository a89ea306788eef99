// The sweep's progress line (app/sweep_progress.hpp).
#include "app/sweep_progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace sansim {

std::string sweep_pace(std::size_t done, std::size_t total, double seconds) {
    char text[96];
    const int at = std::snprintf(text, sizeof text, "%zu/%zu runs", done, total);
    if (done == 0 || !(seconds > 0)) return text;
    const double per_run = seconds / static_cast<double>(done);
    if (per_run >= 1)
        std::snprintf(text + at, sizeof text - static_cast<std::size_t>(at), ", %.2f s per run",
                      per_run);
    else
        std::snprintf(text + at, sizeof text - static_cast<std::size_t>(at), ", %.1f runs/s",
                      1 / per_run);
    return text;
}

SweepProgress::SweepProgress(std::size_t total, bool enabled)
    : total_(total), enabled_(enabled && isatty(STDERR_FILENO) == 1), start_(Clock::now()) {}

void SweepProgress::update(std::size_t done) {
    if (!enabled_) return;
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (seconds < 1) return;
    const double percent = total_ > 0 ? 100.0 * static_cast<double>(done) / total_ : 100.0;
    std::fprintf(stderr, "\rsansim: %3.0f%% %s   ", percent,
                 sweep_pace(done, total_, seconds).c_str());
    std::fflush(stderr);
    shown_ = true;
}

void SweepProgress::finish() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
}

}  // namespace sansim
