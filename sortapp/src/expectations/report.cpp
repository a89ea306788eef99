// Phase reports, the stopwatch and the terminal progress bar.
#include "sortapp/report.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "viaduct/clock.hpp"

namespace sortapp {

namespace {
std::mutex progress_mutex;
}

Stopwatch Stopwatch::now() {
    Stopwatch s;
    s.wall = viaduct::now_seconds();
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    s.cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return s;
}

std::string PhaseReport::to_text() const {
    char line[256];
    std::snprintf(line, sizeof line, "%-9s %8.2f s %9.1f MB/s  cpu %4.0f%% %6.2f CPU-s/GB",
                  name.c_str(), seconds, mb_per_s(), cpu_percent(), cpu_per_gb());
    std::string s = line;
    if (expected_seconds > 0) {
        std::snprintf(line, sizeof line, "  expected %7.2f s  actual/expected %.2f",
                      expected_seconds, ratio());
        s += line;
        if (stale) s += "  STALE";
    }
    if (!note.empty()) s += "  (" + note + ")";
    return s;
}

std::string PhaseReport::to_json() const {
    const nlohmann::ordered_json j = {{"name", name},
                                      {"bytes", bytes},
                                      {"seconds", seconds},
                                      {"mb_per_s", mb_per_s()},
                                      {"cpu_percent", cpu_percent()},
                                      {"cpu_seconds", cpu_seconds},
                                      {"cpu_seconds_per_gb", cpu_per_gb()},
                                      {"expected_seconds", expected_seconds},
                                      {"actual_over_expected", ratio()},
                                      {"stale_figure", stale},
                                      {"note", note}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void ProgressBar::update(const char *phase, std::uint64_t done, std::uint64_t total) {
    if (!enabled_) return;
    std::lock_guard lock(progress_mutex);
    double t = Stopwatch::now().wall;
    if (phase_ != phase) {
        phase_ = phase;
        phase_start_ = t;
        last_draw_ = 0;
    }
    if (t - last_draw_ < 0.1 && done < total) return;
    last_draw_ = t;
    const int width = 40;
    double f = total > 0 ? double(done) / double(total) : 1;
    if (f > 1) f = 1;
    int filled = int(f * width);
    double rate = t > phase_start_ ? done / (t - phase_start_) / 1e6 : 0;
    std::fprintf(stderr, "\r%-8s [%s%s] %3.0f%% %8.1f MB/s", phase,
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 100 * f, rate);
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    std::lock_guard lock(progress_mutex);
    if (enabled_ && drawn_) {
        std::fprintf(stderr, "\r%78s\r", "");
        std::fflush(stderr);
    }
    drawn_ = false;
    phase_.clear();
}

std::string printed(const char *format, ...) {
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    std::string text(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
    std::vsnprintf(text.data(), text.size() + 1, format, again);
    va_end(again);
    return text;
}

}  // namespace sortapp
