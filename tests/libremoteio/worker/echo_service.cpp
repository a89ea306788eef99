// The echo service (see echo_service.hpp).
#include "echo_service.hpp"

namespace riotest {

std::vector<EchoCase> echo_cases(size_t eager_max, size_t big_len) {
    const size_t inline_max = eager_max - 64;  // libremoteio's request header is 64 bytes
    std::vector<size_t> sizes = {
        0, 1, inline_max - 1, inline_max, inline_max + 1, 65536, (1u << 20) + 3};
    std::vector<EchoCase> cases;
    for (size_t i = 0; i < sizes.size(); ++i)
        cases.push_back({sizes[i], sizes[sizes.size() - 1 - i]});
    for (size_t s : sizes) cases.push_back({s, s});
    if (big_len > 0) cases.push_back({big_len, big_len});
    return cases;
}

uint64_t request_seed(int source, int dest, uint32_t command) {
    return (uint64_t(source) << 40) ^ (uint64_t(dest) << 20) ^ command;
}

uint64_t reply_seed(int source, int dest, uint32_t command) {
    return ~request_seed(source, dest, command);
}

void serve_echo(rio_t *rio, rio_incoming_t *in, int self, const std::vector<EchoCase> &cases) {
    rio_request_info_t info;
    RSTATUS(rio_incoming_info(in, &info), RIO_OK);
    WCHECK(info.command >= kEchoFirst && info.command < kEchoFirst + cases.size(),
           "request with unexpected command %u from rank %d", info.command, info.source);
    const EchoCase &k = cases[info.command - kEchoFirst];
    int status = RIO_OK;
    if (info.len != k.request_len ||
        check_pattern(info.data, info.len, request_seed(info.source, self, info.command)) !=
            info.len)
        status = 1;
    WCHECK(info.reply_capacity >= k.reply_len, "reply capacity %zu below %zu", info.reply_capacity,
           k.reply_len);
    std::vector<uint8_t> reply(k.reply_len);
    fill_pattern(reply.data(), reply.size(), reply_seed(info.source, self, info.command));
    RSTATUS(rio_reply(rio, in, status, reply.data(), reply.size()), RIO_OK);
}

void echo_handler(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *h = static_cast<EchoHandler *>(arg);
    serve_echo(rio, in, h->self, h->cases);
}

}  // namespace riotest
