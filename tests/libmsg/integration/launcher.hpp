// Runs one multi-process scenario: `msgrun -n N --timeout T worker SCENARIO ARGS...` in its own
// process group with a chosen environment, and collects exit status and everything it printed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace launcher {

struct JobSpec {
    int ranks = 2;
    int timeout_seconds = 60;  // before VIADUCT_TEST_SLOWDOWN is applied
    std::string scenario;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;  // VIADUCT_* settings for every rank
};

struct JobResult {
    int status = -1;  // msgrun's exit code, or 128 + signal
    std::string output;
    double seconds = 0;
    bool killed_by_driver = false;  // msgrun outlived its own timeout by a wide margin

    // Lines containing `needle`.
    std::vector<std::string> lines_with(const std::string &needle) const;
    // The end of the output, short enough to print with a failed assertion.
    std::string tail(size_t max_bytes = 6000) const;
};

JobResult run_job(const JobSpec &spec);

// VIADUCT_TEST_SLOWDOWN: the build's expected slowdown (sanitizers), at least 1.
int slowdown();

}  // namespace launcher
