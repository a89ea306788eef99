// Diagnostics on stderr, prefixed with the rank.
#include "common/log.hpp"

#include <atomic>

namespace msg {
namespace {
std::atomic<int> g_rank{-1};
std::atomic<bool> g_debug{false};

void vlog(const char *level, const char *fmt, va_list ap) {
    char line[1024];
    int n = std::snprintf(line, sizeof line, "libmsg[%d] %s: ", g_rank.load(), level);
    if (n < 0) return;
    std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, ap);
    std::fprintf(stderr, "%s\n", line);
}
}  // namespace

void log_set_rank(int rank) {
    g_rank = rank;
}

void log_set_debug(bool on) {
    g_debug = on;
}

bool log_debug_enabled() {
    return g_debug.load(std::memory_order_relaxed);
}

void log_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog("error", fmt, ap);
    va_end(ap);
}

void log_debug(const char *fmt, ...) {
    if (!log_debug_enabled()) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("debug", fmt, ap);
    va_end(ap);
}

}  // namespace msg
