// Names in /dev/shm that a terminating signal must not leave behind: those
// libmsg keeps only until every peer has mapped them (during msg_init).
#pragma once

#include <string>

namespace msg {

// Keeps `name` (as shm_open takes it) to be unlinked if SIGTERM, SIGINT or
// SIGHUP ends the process before forget_on_signal(name). The first name
// installs a handler for each of those signals not ignored; it unlinks the
// names, puts back the action it replaced, and raises the signal again, so
// the application's handler (or the default action) still follows. False if
// every slot is taken (the name is then left to msgrun).
bool unlink_on_signal(const std::string &name);

// The name is gone or unlinked in order. With no name left, each handler
// still in place is replaced by the action it had replaced.
void forget_on_signal(const std::string &name);

}  // namespace msg
