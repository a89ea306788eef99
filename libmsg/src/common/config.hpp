// msg_config_t from the environment, for libmsg's own tools (config.cpp).
#pragma once

#include <string>

#include "msg/msg.h"

namespace msg {

// msg_config_init, with report false logging nothing about the variables it
// cannot parse: msgrun follows the settings its ranks use (the coordinator's
// heartbeat period, debug lines) and leaves the ranks to report bad ones.
int config_from_environment(msg_config_t *config, bool report);

// The protocol engine's settings: MSG_OK, or MSG_ERR_CONFIG with *why.
int check_messaging(const msg_config_t &config, std::string *why);

// active_peers with 0 resolved to the default.
int active_peers(const msg_config_t &config);

}  // namespace msg
