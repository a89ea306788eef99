// The libremoteio multi-process test worker: `rio_test_worker SCENARIO [ARGS...]`, started on
// every rank by msgrun. Exit status 0 means every check of the scenario passed on this rank.
#include <iterator>

#include "scenarios.hpp"

namespace {

using worker::Scenario;

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

}  // namespace

int main(int argc, char **argv) {
    return worker::run_scenario("rio_test_worker", std::begin(kScenarios), std::end(kScenarios),
                                argc, argv);
}
