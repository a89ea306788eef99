// libfabric, loaded when a job first asks for the ofi transport rather than
// when a program starts. Debian's libfabric links PSM (libinfinipath,
// libpsm2), whose library constructors each sleep about 0.1 s calibrating a
// clock and install crash handlers in every process that loads them; a job
// over the shm or verbs transport, and every libmsg program that never opens
// the ofi transport, pays for none of that.
#pragma once

#include <rdma/fabric.h>

#include <string>

namespace msg {

// The few functions libfabric exports that libmsg calls; everything else in
// its API is an inline call through the objects these open.
struct FabricLibrary {
    decltype(&::fi_getinfo) getinfo;
    decltype(&::fi_freeinfo) freeinfo;
    decltype(&::fi_dupinfo) dupinfo;
    decltype(&::fi_fabric) fabric;
    decltype(&::fi_strerror) strerror;
    decltype(&::fi_version) version;
};

// libfabric, loaded on the first call (thread-safe; never unloaded). The
// program's signal handlers are as they were before the load: PSM's are
// taken back out. nullptr, with *error naming why, when the library or one of
// its functions cannot be found.
const FabricLibrary *fabric_library(std::string *error);

}  // namespace msg
