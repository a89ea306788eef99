// Diagnostics on stderr, prefixed with the rank. Debug lines are off until
// log_set_debug turns them on (msg_init does, from msg_config_t.debug).
#pragma once

#include <cstdarg>
#include <cstdio>

namespace msg {

void log_set_rank(int rank);
void log_set_debug(bool on);
bool log_debug_enabled();
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace msg
