// Arguments libremoteio refuses with MSG_ERR_INVALID_ARG or
// MSG_ERR_UNKNOWN_RANK before anything is sent, and its status text.
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <string>

#include "local_rio.hpp"

using riounit::LocalRio;

TEST_CASE("rio_init refuses missing pieces and impossible options", "[bad_args]") {
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    rio_t *rio = reinterpret_cast<rio_t *>(&ctx);  // must be reset on failure
    CHECK(rio_init(nullptr, nullptr, nullptr, &rio) == MSG_ERR_INVALID_ARG);
    CHECK(rio_init(ctx, nullptr, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    rio_options_t options;
    for (int which = 0; which < 6; ++which) {
        INFO("option " << which);
        rio_options_init(&options);
        switch (which) {
            case 0:
                options.header_receives = 0;
                break;
            case 1:
                options.io_depth = 0;
                break;
            case 2:
                options.io_depth = 4097;
                break;
            case 3:
                options.io_memory = 0;
                break;
            case 4:
                options.max_transfer = 0;
                break;
            case 5:
                options.finalize_timeout_ms = -1;
                break;
        }
        rio = reinterpret_cast<rio_t *>(&ctx);
        CHECK(rio_init(ctx, nullptr, &options, &rio) == MSG_ERR_INVALID_ARG);
        CHECK(rio == nullptr);
    }
    msg_destroy(ctx);
}

TEST_CASE("requests with bad arguments are refused and issue nothing", "[bad_args]") {
    LocalRio local;
    char byte = 0;
    rio_t *r = local.rio();
    msg_cq_t *cq = local.cq();
    CHECK(rio_request(nullptr, 0, RIO_TARGET_SHADOW, 1, &byte, 1, nullptr, 0, cq, nullptr) ==
          MSG_ERR_INVALID_ARG);
    CHECK(rio_request(r, 0, 2, 1, &byte, 1, nullptr, 0, cq, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(rio_request(r, 0, RIO_TARGET_SHADOW, RIO_CMD_RESERVED, &byte, 1, nullptr, 0, cq,
                      nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(rio_request(r, 1, RIO_TARGET_SHADOW, 1, &byte, 1, nullptr, 0, cq, nullptr) ==
          MSG_ERR_UNKNOWN_RANK);
    CHECK(rio_request(r, -1, RIO_TARGET_SHADOW, 1, &byte, 1, nullptr, 0, cq, nullptr) ==
          MSG_ERR_UNKNOWN_RANK);
    CHECK(rio_request(r, 0, RIO_TARGET_SHADOW, 1, &byte, 1, nullptr, 0, nullptr, nullptr) ==
          MSG_ERR_INVALID_ARG);
    CHECK(rio_request(r, 0, RIO_TARGET_SHADOW, 1, nullptr, 1, nullptr, 0, cq, nullptr) ==
          MSG_ERR_INVALID_ARG);
    CHECK(rio_request(r, 0, RIO_TARGET_SHADOW, 1, &byte, 1, nullptr, 1, cq, nullptr) ==
          MSG_ERR_INVALID_ARG);
    CHECK(rio_read(r, 0, 1, 0, nullptr, 1, cq, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(rio_write(r, 0, 1, 0, nullptr, 1, cq, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(rio_set_handler(r, RIO_CMD_RESERVED + 1, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    uint64_t handle = 0;
    CHECK(rio_export(r, nullptr, 0, 1, RIO_EXPORT_READ_ONLY, &handle) == MSG_ERR_INVALID_ARG);
    CHECK(rio_export(r, "/dev/null", 0, 1, 7, &handle) == MSG_ERR_INVALID_ARG);
    CHECK(rio_export(r, "/dev/null", 0, 1, RIO_EXPORT_READ_ONLY, &handle) == RIO_ERR_IO);
    CHECK(rio_get_stats(r, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(local.stats().requests_issued == 0);
    CHECK(riounit::cq_empty(cq));
}

TEST_CASE("rio_reply and rio_incoming_info refuse bad arguments and leave the request to answer",
          "[bad_args]") {
    LocalRio local;
    REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_WORKER, 8, nullptr, 0, nullptr, 0, local.cq(),
                        nullptr) == MSG_OK);
    msg_completion_t c = riounit::next_completion(local.cq());
    REQUIRE(c.op == RIO_OP_REQUEST);
    auto *request = static_cast<rio_incoming_t *>(c.cookie);
    CHECK(rio_reply(local.rio(), request, 0, nullptr, 1) == MSG_ERR_INVALID_ARG);
    CHECK(rio_reply(nullptr, request, 0, nullptr, 0) == MSG_ERR_INVALID_ARG);
    rio_request_info_t info{};
    CHECK(rio_incoming_info(nullptr, &info) == MSG_ERR_INVALID_ARG);
    CHECK(rio_incoming_info(request, nullptr) == MSG_ERR_INVALID_ARG);
    REQUIRE(rio_reply(local.rio(), request, 0, nullptr, 0) == MSG_OK);
    c = riounit::next_completion(local.cq());
    CHECK(c.op == RIO_OP_REPLY);
    CHECK(c.status == RIO_OK);
}

TEST_CASE("rio_strerror names every libremoteio status and passes libmsg's through", "[bad_args]") {
    std::set<std::string> texts;
    for (int status = RIO_ERR_BAD_HANDLE; status >= RIO_ERR_PEER_MEMORY; --status) {
        const char *text = rio_strerror(status);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 0);
        texts.insert(text);
    }
    CHECK(texts.size() == static_cast<size_t>(RIO_ERR_BAD_HANDLE - RIO_ERR_PEER_MEMORY + 1));
    CHECK(std::string(rio_strerror(MSG_ERR_PEER_FAILED)) == msg_strerror(MSG_ERR_PEER_FAILED));
    CHECK(rio_strerror(-12345) != nullptr);
}
