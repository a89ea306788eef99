// Diagnostics: on stderr, prefixed with the rank once it is known, or handed
// to the application's handler (msg_set_log_handler). Lines above the level
// (msg_init sets it from msg_config_t.log_level and .debug) are dropped.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace msg {

void log_set_rank(int rank);
// MSG_LOG_* (msg/msg.h); 0 is the default (MSG_LOG_WARN), others are clamped.
void log_set_level(int level);
// Debug lines on (the level becomes at least MSG_LOG_DEBUG) or off (at most MSG_LOG_INFO).
void log_set_debug(bool on);
bool log_debug_enabled();
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace msg
