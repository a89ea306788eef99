// The multi-process test worker: `libmsg_test_worker SCENARIO [ARGS...]`, started on every rank
// by msgrun. Exit status 0 means every check of the scenario passed on this rank.
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
    {"payload", worker::run_payload, "SEED RANDOM_COUNT BIG_MIB   (2 ranks)"},
    {"payload_huge", worker::run_payload_huge, "MIB   (2 ranks)"},
    {"wildcard", worker::run_wildcard, "   (4 ranks)"},
    {"fifo", worker::run_fifo, "COUNT   (3 ranks)"},
    {"outstanding", worker::run_outstanding, "PER_PEER   (any number of ranks)"},
    {"truncation", worker::run_truncation, "   (2 ranks)"},
    {"threads", worker::run_threads, "THREADS ROUNDS   (2+ ranks)"},
    {"peer_failure", worker::run_peer_failure, "kill|exit   (3 ranks)"},
    {"idle_cpu", worker::run_idle_cpu, "SECONDS MAX_PERCENT   (2 ranks)"},
    {"connect", worker::run_connect, "   (any number of ranks)"},
    {"api_errors", worker::run_api_errors, "   (2 ranks)"},
    {"registration", worker::run_registration, "MIB ROUNDS EXPECT_REUSE   (2 ranks)"},
};

void usage() {
    std::fprintf(stderr, "usage: libmsg_test_worker SCENARIO [ARGS...]\nscenarios:\n");
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
        // The driver uses this to clean up after ranks that die without closing the fabric.
        worker::say("pid %d", static_cast<int>(getpid()));
        s.run(args);
        // The driver counts these lines: a rank that never got here did not pass.
        worker::say("PASS %s", s.name);
        return 0;
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    usage();
    return 2;
}
