// Scenario "connect": every rank of a (large) local job connects in msg_init, reports how long
// that took, and then reaches every other rank; each checks the transport the job opened.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "scenarios.hpp"

namespace worker {

namespace {

// What each rank sends every other: who it is and where it runs.
struct Card {
    int rank = -1;
    char host[64] = {};
};

// The transport msg_init should have opened: the one named, else (auto) ofi where a provider
// is named or the ranks run on several hosts (network namespaces with hostnames of their own),
// shm where every rank runs on this one.
void check_transport(const Job &job, bool one_host) {
    const char *transport = std::getenv("VIADUCT_TRANSPORT");
    const char *provider = std::getenv("VIADUCT_PROVIDER");
    const bool named = transport != nullptr && *transport != '\0' && std::strcmp(transport, "auto");
    const bool provider_named = provider != nullptr && *provider != '\0';
    const char *expected = named ? transport : provider_named || !one_host ? "ofi" : "shm";
    WCHECK(std::strcmp(job.info.transport, expected) == 0,
           "msg_get_info transport '%s' in a job of %d (%s), VIADUCT_TRANSPORT=%s, "
           "VIADUCT_PROVIDER=%s",
           job.info.transport, job.size, one_host ? "one host" : "several hosts",
           transport ? transport : "(unset)", provider ? provider : "(unset)");
    // libmsg loads libfabric only for the ofi transport (its providers' libraries cost 0.2 s
    // of start-up and install crash handlers); a job over shm or verbs never has it.
    void *fabric = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (fabric != nullptr) dlclose(fabric);
    WCHECK((fabric != nullptr) == (std::strcmp(job.info.transport, "ofi") == 0),
           "libfabric is %s in a job over the %s transport", fabric ? "loaded" : "not loaded",
           job.info.transport);
}

}  // namespace

void run_connect(const Args &) {
    constexpr int kTag = 3;
    Job job;
    check_info_matches_environment(job.info);
    WCHECK(job.info.connect_seconds > 0.0, "msg_get_info connect_seconds is %g",
           job.info.connect_seconds);
    WCHECK(job.info.provider[0] != '\0', "msg_get_info names no provider");
    if (job.rank == 0)
        say("connect_seconds=%.6f ranks=%d provider=%s", job.info.connect_seconds, job.size,
            job.info.provider);

    // All to all: one small message over every connection, both directions.
    Card mine;
    mine.rank = job.rank;
    gethostname(mine.host, sizeof mine.host - 1);
    Cq cq(job.ctx());
    std::vector<Card> from(static_cast<size_t>(job.size));
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank)
            WSTATUS(msg_irecv(job.ctx(), p, kTag, &from[static_cast<size_t>(p)], sizeof(Card),
                              cq.get(), nullptr),
                    MSG_OK);
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank)
            WSTATUS(msg_isend(job.ctx(), p, kTag, &mine, sizeof mine, cq.get(), nullptr), MSG_OK);
    for (int n = 0; n < 2 * (job.size - 1); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "all-to-all");
        WCHECK(c.status == MSG_OK, "all-to-all: %s", describe(c).c_str());
    }
    bool one_host = true;
    for (int p = 0; p < job.size; ++p) {
        if (p == job.rank) continue;
        const Card &c = from[static_cast<size_t>(p)];
        WCHECK(c.rank == p, "message from %d says %d", p, c.rank);
        if (std::strncmp(c.host, mine.host, sizeof mine.host) != 0) one_host = false;
    }
    // Only a job of one reports "self"; a larger one names the transport it opened.
    if (job.size > 1) check_transport(job, one_host);
    cq.destroy();
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
