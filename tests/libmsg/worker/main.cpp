// The multi-process test worker: `libmsg_test_worker SCENARIO [ARGS...]`, started on every rank
// by msgrun. Exit status 0 means every check of the scenario passed on this rank.
#include <iterator>

#include "scenarios.hpp"

namespace {

using worker::Scenario;

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
    {"probe", worker::run_probe, "   (2 ranks)"},
    {"receive_memory", worker::run_receive_memory, "   (2 ranks; needs no context)"},
    {"protocol_choice", worker::run_protocol_choice, "   (2 ranks)"},
    {"collectives", worker::run_collectives, "[all|reduce|bytes|large]   (any number of ranks)"},
    {"collective_failure", worker::run_collective_failure,
     "NAME DELAY_MS first|victim   (3+ ranks; the last dies)"},
    {"collective_threads", worker::run_collective_threads, "ROUNDS   (2+ ranks)"},
};

}  // namespace

int main(int argc, char **argv) {
    return worker::run_scenario("libmsg_test_worker", std::begin(kScenarios), std::end(kScenarios),
                                argc, argv);
}
