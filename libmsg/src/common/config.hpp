// msg_config_t from the environment, for libmsg's own tools (config.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "msg/msg.h"

namespace msg {

// The bytes of a receive buffer every packet's header takes (protocol/wire.hpp
// holds WireHeader to it), here so that eager_max can be checked against the
// buffer without the settings knowing the wire.
constexpr size_t kPacketHeaderBytes = 64;

// msg_config_init, with report false logging nothing about the variables it
// cannot parse: msgrun follows the settings its ranks use (the coordinator's
// heartbeat period, debug lines) and leaves the ranks to report bad ones.
int config_from_environment(msg_config_t *config, bool report);

// The VIADUCT_* variables msg_config_init reads, in the order it reads them.
std::vector<std::string> setting_names();

// The protocol engine's settings: MSG_OK, or MSG_ERR_CONFIG with *why.
int check_messaging(const msg_config_t &config, std::string *why);

// active_peers with 0 resolved to the default.
int active_peers(const msg_config_t &config);

// The transport as configured: "auto" (NULL or "" too), ofi, verbs or shm.
const char *transport_name(const msg_config_t &config);
// The transport a job opens: the one named, or for auto libmsg's own shm transport when every
// rank runs on this host (one_host) and no libfabric provider is named, else ofi.
const char *chosen_transport(const msg_config_t &config, bool one_host);

// The silence after which the other end of a coordinator link counts as gone
// (msg_info_t.heartbeat_ms): heartbeat_setting (msg_config_t.heartbeat_ms)
// when positive, at least 100 ms; else the larger of timeout_ms and 10 s, so
// a loaded host is not taken for a dead one. The bootstrap runs its links with
// it and msg_get_info reports it, so it lives with the settings.
int heartbeat_ms(int timeout_ms, int heartbeat_setting = 0);

}  // namespace msg
