// The distributed sort's command line, shared by `sortapp run` and `sortapp job`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages.hpp"

namespace sortapp::cluster {

struct JobOptions {
    int nodes = 0;              // run: sort processes to start
    std::string input, output;  // patterns; {rank} becomes the node's rank
    std::string scratch;        // pattern; empty: the output's directory
    JobParams params;
    double network_mb_s = 0;  // 0: measured before phase 3b
    double straggler = 1.25;  // slower than the median by this factor: named
    bool json = false;
    bool watch = false;            // the live view (monitor/live_view.hpp)
    double sample_hz = 10;         // every node's counter samples per second
    std::string timeline;          // the monitor writes the job's timeline here; empty: none
    long timeout_s = 3600;         // run: the whole job's limit
    std::string bind_to = "none";  // run: msgrun --bind-to
    int stall_ms = 30000;          // a process silent this long is declared stopped
    bool same_input = false;       // an --input without {rank} is meant
    std::string job_id;            // names what the job creates; empty: from the pid
    std::string transport, provider, protocol;  // passed to libmsg (VIADUCT_*); empty: its default
    int restricted = -1;                        // -1: libmsg's default
    std::vector<std::string> forwarded;         // the options `run` hands to every `job` process
    // When `sortapp run` started and when this process had joined the job (msg_init returned),
    // CLOCK_REALTIME microseconds; 0: unknown. The report's start-up figures count from them.
    int64_t launched_us = 0, joined_us = 0;
};

// Parses argv[1..] (argv[0] is the subcommand). On a bad command line prints
// the problem to stderr and returns false with *exit_code 2; --help prints
// usage and returns false with *exit_code 0.
bool parse_job_options(int argc, char **argv, bool is_run, JobOptions &out, int *exit_code);

// The pattern with every "{rank}" replaced.
std::string expand(const std::string &pattern, int rank);

}  // namespace sortapp::cluster
