// The libremoteio multi-process test worker: `rio_test_worker SCENARIO [ARGS...]`, started on
// every rank by msgrun. Exit status 0 means every check of the scenario passed on this rank.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "scenarios.hpp"

namespace {

struct Scenario {
    const char *name;
    void (*run)(const worker::Args &);
    const char *usage;
};

const Scenario kScenarios[] = {
    {"roundtrip", riotest::run_roundtrip, "BIG_MIB   (any number of ranks)"},
    {"ipc_and_io", riotest::run_ipc_and_io, "READS   (3 ranks)"},
    {"outstanding", riotest::run_outstanding, "COUNT   (2+ ranks)"},
    {"violations", riotest::run_violations, "   (2 ranks)"},
    {"killed_peer", riotest::run_killed_peer, "   (3 ranks)"},
    {"shutdown_load", riotest::run_shutdown_load, "COUNT   (2+ ranks)"},
    {"threads", riotest::run_threads, "THREADS CALLS   (2+ ranks)"},
    {"handles", riotest::run_handles, "   (2 ranks)"},
    {"withheld_data", riotest::run_withheld_data, "   (2 ranks)"},
    {"finalize_stuck", riotest::run_finalize_stuck, "   (2 ranks)"},
};

void usage() {
    std::fprintf(stderr, "usage: rio_test_worker SCENARIO [ARGS...]\nscenarios:\n");
    for (const Scenario &s : kScenarios) std::fprintf(stderr, "  %s %s\n", s.name, s.usage);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        usage();
        return 2;
    }
    for (const Scenario &s : kScenarios) {
        if (std::strcmp(s.name, argv[1]) != 0) continue;
        worker::Args args(argv + 2, argv + argc);
        worker::say("pid %d", static_cast<int>(getpid()));
        s.run(args);
        worker::say("PASS %s", s.name);
        return 0;
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    usage();
    return 2;
}
