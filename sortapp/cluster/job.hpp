// The distributed sort: `sortapp run` (launches a monitor and N sort
// processes on this machine through msgrun) and `sortapp job` (one process of
// such a job, however it was started: msgrun, mpirun, srun, the TCP
// rendezvous). The job's last rank is the monitor; the others sort.
//
// The job's processes are the program sortapp-job, whose main is job_main: only it links libmsg.
// `sortapp job` becomes sortapp-job (exec_job).
#pragma once

namespace sortapp::cluster {

int run_main(int argc, char **argv);  // argv[0] is "run"
// sortapp-job takes this process over: found beside this program (installed, or in the build
// tree), on PATH, or as $VIADUCT_SORTAPP_JOB. Returns, with the exit status, only when it
// cannot be started.
int exec_job(int argc, char **argv);  // argv[0] is "job"
int job_main(int argc, char **argv);  // argv[0] is "job": sortapp-job's main

}  // namespace sortapp::cluster
