// sortapp-job's process: one node of a distributed sort, or its monitor (the job's last rank),
// joined through libmsg. The only part of the sort that loads the fabric (see job.hpp).
#include <cstdio>
#include <cstdlib>

#include "job.hpp"
#include "liveness.hpp"
#include "monitor/counters.hpp"
#include "node.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "sortapp/cleanup.hpp"

namespace sortapp::cluster {

namespace {

// libmsg reads its choices from VIADUCT_* variables.
void export_fabric_options(const JobOptions &o) {
    if (!o.transport.empty()) setenv("VIADUCT_TRANSPORT", o.transport.c_str(), 1);
    if (!o.provider.empty()) setenv("VIADUCT_PROVIDER", o.provider.c_str(), 1);
    if (!o.protocol.empty()) setenv("VIADUCT_PROTOCOL", o.protocol.c_str(), 1);
    if (o.restricted >= 0) setenv("VIADUCT_RESTRICTED", o.restricted ? "1" : "0", 1);
}

}  // namespace

int job_main(int argc, char **argv) {
    JobOptions o;
    int code = 0;
    if (!parse_job_options(argc, argv, false, o, &code)) return code;
    // Before any thread exists: a signal then removes what this process created.
    cleanup::install_signal_cleanup([] { return "sortapp: " + whereabouts(); });
    export_fabric_options(o);
    msg_context_t *msg = nullptr;
    int rc = msg_init(nullptr, &msg);
    if (rc != MSG_OK) {
        std::fprintf(stderr, "sortapp job: joining the job: %s\n", msg_strerror(rc));
        return 1;
    }
    o.joined_us = realtime_us();
    int rank = 0, size = 0;
    msg_rank(msg, &rank);
    msg_size(msg, &size);
    if (size < 2) {
        std::fprintf(stderr,
                     "sortapp job: needs at least 2 processes (nodes + the monitor), "
                     "got %d\n",
                     size);
        msg_destroy(msg);
        return 2;
    }
    const int monitor = size - 1;
    if (Status s = check_patterns(o, monitor); !s) {
        std::fprintf(stderr, "sortapp job: %s\n", s.message().c_str());
        msg_destroy(msg);
        return 2;
    }
    code = rank == monitor ? monitor_main(o, msg, monitor) : node_main(o, msg, rank, monitor);
    rc = msg_finalize(msg);
    if (rc != MSG_OK && code == 0) code = 1;
    msg_destroy(msg);
    return code;
}

}  // namespace sortapp::cluster
