// The distributed sort: `sortapp run` (launches a monitor and N sort
// processes on this machine through msgrun) and `sortapp job` (one process of
// such a job, however it was started: msgrun, mpirun, srun, the TCP
// rendezvous). The job's last rank is the monitor; the others sort.
#pragma once

namespace sortapp::cluster {

int run_main(int argc, char **argv);  // argv[0] is "run"
int job_main(int argc, char **argv);  // argv[0] is "job"

}  // namespace sortapp::cluster
