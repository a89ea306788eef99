// The transports this libmsg was built with, chosen at run time by name
// (msg_config_t.transport), as libfabric chooses a provider and Mercury an
// NA class: a new transport is one more entry, and nothing above this table
// knows which ones a build has.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport.hpp"

namespace msg {

struct TransportEntry {
    const char *name;
    // Opens the transport; null with *error filled when it cannot.
    std::unique_ptr<Transport> (*open)(const TransportSettings &settings, std::string *error);
};

// Whether libmsg has a transport of this name at all, built in or not.
bool transport_known(std::string_view name);

// Every transport libmsg knows: whether this build has it, and why not when it does not.
struct TransportStatus {
    const char *name;
    bool built;
    const char *why;  // when not built
};
std::vector<TransportStatus> transports();

// The RDMA devices rdma-core lists here (the verbs transport's choice among them), by name;
// none in a build without rdma-core.
std::vector<std::string> verbs_devices();

// The entry named `name`, or null with *error saying why: an unknown name,
// or a transport this build left out (verbs without rdma-core).
const TransportEntry *find_transport(std::string_view name, std::string *error);

}  // namespace msg
