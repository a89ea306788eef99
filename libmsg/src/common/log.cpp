// Diagnostics on stderr, prefixed with the rank, or through the handler the
// application installed.
#include "common/log.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "msg/msg.h"

namespace msg {
namespace {
std::atomic<int> g_rank{-1};
std::atomic<int> g_level{MSG_LOG_WARN};

// The handler and its argument change together, so they share a lock; it is
// not held while the handler runs (a handler may be slow, or log itself).
std::mutex g_handler_mu;
msg_log_fn g_handler = nullptr;
void *g_handler_arg = nullptr;

const char *level_name(int level) {
    static const char *const names[] = {"error", "warn", "info", "debug"};
    return names[std::clamp(level, 1, 4) - 1];
}

void vlog(int level, const char *fmt, va_list ap) {
    if (level > g_level.load(std::memory_order_relaxed)) return;
    char text[1024];
    std::vsnprintf(text, sizeof text, fmt, ap);
    msg_log_fn fn;
    void *arg;
    {
        std::lock_guard<std::mutex> lk(g_handler_mu);
        fn = g_handler;
        arg = g_handler_arg;
    }
    if (fn != nullptr) {
        fn(arg, level, text);
        return;
    }
    // Before the job is joined the rank is not known: no made-up number.
    const int rank = g_rank.load();
    if (rank >= 0)
        std::fprintf(stderr, "libmsg[%d] %s: %s\n", rank, level_name(level), text);
    else
        std::fprintf(stderr, "libmsg %s: %s\n", level_name(level), text);
}
}  // namespace

void log_set_rank(int rank) {
    g_rank = rank;
}

void log_set_level(int level) {
    g_level = level == 0 ? MSG_LOG_WARN
                         : std::clamp(level, static_cast<int>(MSG_LOG_ERROR),
                                      static_cast<int>(MSG_LOG_DEBUG));
}

void log_set_debug(bool on) {
    if (on)
        g_level = MSG_LOG_DEBUG;
    else if (g_level.load() > MSG_LOG_INFO)
        g_level = MSG_LOG_INFO;
}

bool log_debug_enabled() {
    return g_level.load(std::memory_order_relaxed) >= MSG_LOG_DEBUG;
}

#define VIADUCT_LOG_AT(level) \
    va_list ap;               \
    va_start(ap, fmt);        \
    vlog(level, fmt, ap);     \
    va_end(ap)

void log_error(const char *fmt, ...) {
    VIADUCT_LOG_AT(MSG_LOG_ERROR);
}

void log_warn(const char *fmt, ...) {
    VIADUCT_LOG_AT(MSG_LOG_WARN);
}

void log_info(const char *fmt, ...) {
    VIADUCT_LOG_AT(MSG_LOG_INFO);
}

void log_debug(const char *fmt, ...) {
    if (!log_debug_enabled()) return;
    VIADUCT_LOG_AT(MSG_LOG_DEBUG);
}

}  // namespace msg

extern "C" int msg_set_log_handler(msg_log_fn fn, void *arg) {
    std::lock_guard<std::mutex> lk(msg::g_handler_mu);
    msg::g_handler = fn;
    msg::g_handler_arg = fn != nullptr ? arg : nullptr;
    return MSG_OK;
}

extern "C" int msg_set_log_level(int level) {
    if (level < MSG_LOG_ERROR || level > MSG_LOG_DEBUG) return MSG_ERR_INVALID_ARG;
    msg::log_set_level(level);
    return MSG_OK;
}
