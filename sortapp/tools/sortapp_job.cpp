// sortapp-job: one process of a distributed sort, a node or the monitor (the job's last rank),
// as `sortapp run` starts it under msgrun and `sortapp job` becomes it under any launcher
// (mpirun, srun). Its options are `sortapp job`'s (sortapp job --help).
#include <csignal>
#include <string>

#include "cli.hpp"
#include "job.hpp"
#include "liveness.hpp"
#include "sortapp/cleanup.hpp"
#include "viaduct/fatal.hpp"

int main(int argc, char **argv) {
    // A process of a job says which node it is and where it was.
    viaduct::install_fatal_handler("sortapp", [](const std::string &m) {
        sortapp::cleanup::abort_process(sortapp::cli::exit_error,
                                        "sortapp: " + sortapp::cluster::whereabouts() +
                                            m.substr(m.find(':')) +
                                            "; removed what this node created");
    });
    // A file size limit then fails the write with EFBIG, reported like any write error.
    std::signal(SIGXFSZ, SIG_IGN);
    static char command[] = "job";  // its messages and --help name it as `sortapp job`
    argv[0] = command;
    return sortapp::cluster::job_main(argc, argv);
}
