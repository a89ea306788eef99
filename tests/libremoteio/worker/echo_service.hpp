// The IPC service the scenarios talk to: request case k carries a pattern
// the server checks, and the reply is a pattern the requester checks, with
// sizes from one table straddling the inline threshold.
#pragma once

#include "rio_harness.hpp"

namespace riotest {

struct EchoCase {
    size_t request_len;
    size_t reply_len;
};

// Cases for a job whose eager limit is eager_max: 0-6 pair small requests
// with large replies and back, 7-13 are the same size each way (0, 1, the
// inline limit -1/0/+1, 64 KiB, 1 MiB + 3); big_len > 0 adds a 14th case of
// that size each way.
std::vector<EchoCase> echo_cases(size_t eager_max, size_t big_len);

// Commands 1..n select a case; kEchoBig the big one.
constexpr uint32_t kEchoFirst = 1;
uint64_t request_seed(int source, int dest, uint32_t command);
uint64_t reply_seed(int source, int dest, uint32_t command);

// Checks the request against its case and replies: status RIO_OK with the
// reply pattern, or status 1 if the request data was wrong.
void serve_echo(rio_t *rio, rio_incoming_t *in, int self, const std::vector<EchoCase> &cases);
// A rio_handler_fn serving echo on the shadow thread; arg is an EchoHandler.
struct EchoHandler {
    int self;
    std::vector<EchoCase> cases;
};
void echo_handler(rio_t *rio, rio_incoming_t *in, void *arg);

}  // namespace riotest
