// The river multi-process test worker: `river_test_worker SCENARIO [ARGS...]`, started on every
// rank by msgrun. Exit status 0 means every check of the scenario passed on this rank.
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
    {"flow", rivertest::run_flow, "all|split|overlap range|hash|own RECORD BATCH RECORDS"},
    {"slow_sink", rivertest::run_slow_sink, "   (3 ranks: sources 0, 1; sink 2)"},
    {"killed_sink", rivertest::run_killed_sink, "   (4 ranks: sources 0, 1; sinks 2, 3)"},
    {"killed_source", rivertest::run_killed_source, "   (4 ranks: sources 0, 1; sinks 2, 3)"},
    {"rogue_source", rivertest::run_rogue_source, "   (2 ranks: sink 0, rogue 1)"},
    {"rogue_sink", rivertest::run_rogue_sink, "   (2 ranks: source 0, rogue 1)"},
};

void usage() {
    std::fprintf(stderr, "usage: river_test_worker SCENARIO [ARGS...]\nscenarios:\n");
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
