// Native shared-memory transport for the ranks of one host: packets through
// a lock-free ring per sender in the receiver's region in /dev/shm, RDMA
// reads and writes by cross-memory copies, checked against the owner's
// registration table; the doorbell wakes a sleeping receiver.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace msg {

// Opens the transport (creates this rank's region). Null, with *error filled,
// when the job spans hosts or the region cannot be made.
std::unique_ptr<Transport> open_shm_transport(const TransportSettings &settings,
                                              std::string *error);

}  // namespace msg
