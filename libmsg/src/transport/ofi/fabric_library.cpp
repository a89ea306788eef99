// Loads libfabric with dlopen on first use (fabric_library.hpp says why).
#include "transport/ofi/fabric_library.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <mutex>

#include "transport/ofi/psm_signals.hpp"

namespace msg {
namespace {

// The soname the build linked against before: the ABI these types describe.
constexpr const char *kSoname = "libfabric.so.1";

struct Loaded {
    FabricLibrary api{};
    bool ok = false;
    std::string error;
};

// Each by the symbol version a link against libfabric 1.17's headers binds,
// so the structures the function reads are the ones these headers describe.
template <typename Fn>
bool find(void *handle, const char *name, const char *version, Fn *out, std::string *error) {
    *out = reinterpret_cast<Fn>(dlvsym(handle, name, version));
    if (*out == nullptr) *error = std::string(kSoname) + " has no " + name + "@" + version;
    return *out != nullptr;
}

Loaded load() {
    Loaded l;
    PsmSignalSnapshot before;
    void *handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    before.put_back_over_psm();
    if (handle == nullptr) {
        const char *why = dlerror();
        l.error = std::string("cannot load libfabric (") + (why != nullptr ? why : kSoname) +
                  "): install libfabric1, or use VIADUCT_TRANSPORT=shm or verbs";
        return l;
    }
    FabricLibrary &a = l.api;
    l.ok = find(handle, "fi_getinfo", "FABRIC_1.3", &a.getinfo, &l.error) &&
           find(handle, "fi_freeinfo", "FABRIC_1.3", &a.freeinfo, &l.error) &&
           find(handle, "fi_dupinfo", "FABRIC_1.3", &a.dupinfo, &l.error) &&
           find(handle, "fi_fabric", "FABRIC_1.1", &a.fabric, &l.error) &&
           find(handle, "fi_strerror", "FABRIC_1.0", &a.strerror, &l.error) &&
           find(handle, "fi_version", "FABRIC_1.0", &a.version, &l.error);
    return l;
}

}  // namespace

const FabricLibrary *fabric_library(std::string *error) {
    static std::once_flag once;
    static Loaded loaded;
    std::call_once(once, [] { loaded = load(); });
    if (!loaded.ok && error != nullptr) *error = loaded.error;
    return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace msg
