// Diagnostics on stderr, prefixed with the rank; VIADUCT_DEBUG=1 enables debug lines.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace msg {

void log_set_rank(int rank);
bool log_debug_enabled();
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace msg
