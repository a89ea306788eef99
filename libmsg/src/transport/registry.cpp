// The table of transports: libfabric and native shared memory always, native
// verbs when built with rdma-core.
#include "transport/registry.hpp"

#include "transport/shm/shm_transport.hpp"

#ifdef VIADUCT_HAVE_VERBS
#include <infiniband/verbs.h>

#include "transport/verbs/verbs_transport.hpp"
#endif

namespace msg {
namespace {

const TransportEntry kTransports[] = {
    {"ofi", open_ofi_transport},
    {"shm", open_shm_transport},
#ifdef VIADUCT_HAVE_VERBS
    {"verbs", open_verbs_transport},
#endif
};

// Transports a build may leave out, and what it then lacks.
struct Absent {
    const char *name;
    const char *why;
};
const Absent kAbsent[] = {
    {"verbs", "this libmsg was built without rdma-core: no verbs transport"},
};

const Absent *absent(std::string_view name) {
    for (const Absent &a : kAbsent)
        if (name == a.name) return &a;
    return nullptr;
}

const TransportEntry *built_in(std::string_view name) {
    for (const TransportEntry &e : kTransports)
        if (name == e.name) return &e;
    return nullptr;
}

}  // namespace

bool transport_known(std::string_view name) {
    return built_in(name) != nullptr || absent(name) != nullptr;
}

std::vector<TransportStatus> transports() {
    std::vector<TransportStatus> out;
    for (const TransportEntry &e : kTransports) out.push_back({e.name, true, ""});
    for (const Absent &a : kAbsent)
        if (built_in(a.name) == nullptr) out.push_back({a.name, false, a.why});
    return out;
}

std::vector<std::string> verbs_devices() {
    std::vector<std::string> names;
#ifdef VIADUCT_HAVE_VERBS
    int n = 0;
    if (ibv_device **list = ibv_get_device_list(&n)) {
        for (int i = 0; i < n; ++i) names.push_back(ibv_get_device_name(list[i]));
        ibv_free_device_list(list);
    }
#endif
    return names;
}

const TransportEntry *find_transport(std::string_view name, std::string *error) {
    if (const TransportEntry *e = built_in(name)) return e;
    if (const Absent *a = absent(name))
        *error = a->why;
    else
        *error = "no transport named " + std::string(name);
    return nullptr;
}

}  // namespace msg
