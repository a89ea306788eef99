// msg_config_init: defaults, VIADUCT_* overrides that parse, and MSG_ERR_CONFIG (keeping the
// default) for each variable that does not.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "local_job.hpp"

namespace {

msg_config_t defaults() {
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    return c;
}

bool same(const msg_config_t &a, const msg_config_t &b) {
    return a.long_protocol == b.long_protocol && a.restricted == b.restricted &&
           a.eager_max == b.eager_max && a.buffer_size == b.buffer_size && a.credits == b.credits &&
           a.timeout_ms == b.timeout_ms && a.spin_us == b.spin_us &&
           (a.provider == nullptr) == (b.provider == nullptr);
}

}  // namespace

TEST_CASE("msg_config_init gives sane defaults", "[config]") {
    msg_config_t c = defaults();
    CHECK(c.provider == nullptr);
    CHECK((c.long_protocol == MSG_PROTOCOL_SENDRECV || c.long_protocol == MSG_PROTOCOL_RDMA ||
           c.long_protocol == MSG_PROTOCOL_RDMA_WRITE));
    CHECK(c.eager_max > 0);
    CHECK(c.buffer_size > c.eager_max);
    CHECK(c.credits >= 1);
    CHECK(c.timeout_ms > 0);
    CHECK((c.spin_us >= 0 || c.spin_us == MSG_SPIN_AUTO));
    CHECK(msg_config_init(nullptr) == MSG_ERR_INVALID_ARG);
}

TEST_CASE("VIADUCT_* variables override the defaults", "[config]") {
    unit::ScopedEnv provider("VIADUCT_PROVIDER", "tcp;ofi_rxm");
    unit::ScopedEnv protocol("VIADUCT_PROTOCOL", "sendrecv");
    unit::ScopedEnv restricted("VIADUCT_RESTRICTED", "1");
    unit::ScopedEnv eager("VIADUCT_EAGER_MAX", "1000");
    unit::ScopedEnv buffer("VIADUCT_BUFFER_SIZE", "65536");
    unit::ScopedEnv credits("VIADUCT_CREDITS", "3");
    unit::ScopedEnv timeout("VIADUCT_TIMEOUT_MS", "1234");
    unit::ScopedEnv spin("VIADUCT_SPIN_US", "0");
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    REQUIRE(c.provider != nullptr);
    CHECK(std::strcmp(c.provider, "tcp;ofi_rxm") == 0);
    CHECK(c.long_protocol == MSG_PROTOCOL_SENDRECV);
    CHECK(c.restricted != 0);
    CHECK(c.eager_max == 1000);
    CHECK(c.buffer_size == 65536);
    CHECK(c.credits == 3);
    CHECK(c.timeout_ms == 1234);
    CHECK(c.spin_us == 0);
    {
        unit::ScopedEnv automatic("VIADUCT_SPIN_US", "auto");
        msg_config_t a{};
        REQUIRE(msg_config_init(&a) == MSG_OK);
        CHECK(a.spin_us == MSG_SPIN_AUTO);
    }
    {
        unit::ScopedEnv rdma("VIADUCT_PROTOCOL", "rdma");
        unit::ScopedEnv unrestricted("VIADUCT_RESTRICTED", "0");
        REQUIRE(msg_config_init(&c) == MSG_OK);
        CHECK(c.long_protocol == MSG_PROTOCOL_RDMA);
        CHECK(c.restricted == 0);
    }
}

TEST_CASE("VIADUCT_PROTOCOL=rdma-write selects the RDMA write protocol", "[config]") {
    unit::ScopedEnv protocol("VIADUCT_PROTOCOL", "rdma-write");
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    CHECK(c.long_protocol == MSG_PROTOCOL_RDMA_WRITE);
    CHECK(MSG_PROTOCOL_RDMA_WRITE == 2);
    // A job of one takes it (msg_init checks the protocol), and reports it.
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(&c, &ctx) == MSG_OK);
    msg_info_t info{};
    REQUIRE(msg_get_info(ctx, &info) == MSG_OK);
    CHECK(info.long_protocol == MSG_PROTOCOL_RDMA_WRITE);
    CHECK(msg_finalize(ctx) == MSG_OK);
    msg_destroy(ctx);
}

TEST_CASE("an unparsable VIADUCT_* variable gives MSG_ERR_CONFIG and keeps the default",
          "[config]") {
    const msg_config_t fallback = defaults();
    struct Bad {
        const char *name;
        const char *value;
    };
    const Bad cases[] = {
        {"VIADUCT_PROTOCOL", "bogus"},       {"VIADUCT_PROTOCOL", ""},
        {"VIADUCT_PROTOCOL", "RDMA "},       {"VIADUCT_PROTOCOL", "rdma_write"},
        {"VIADUCT_PROTOCOL", "rdma-write "}, {"VIADUCT_PROTOCOL", "write"},
        {"VIADUCT_RESTRICTED", "2"},         {"VIADUCT_RESTRICTED", "yes"},
        {"VIADUCT_RESTRICTED", ""},          {"VIADUCT_EAGER_MAX", "abc"},
        {"VIADUCT_EAGER_MAX", "-1"},         {"VIADUCT_EAGER_MAX", "12x"},
        {"VIADUCT_EAGER_MAX", ""},           {"VIADUCT_EAGER_MAX", "99999999999999999999999"},
        {"VIADUCT_BUFFER_SIZE", "lots"},     {"VIADUCT_BUFFER_SIZE", "-4096"},
        {"VIADUCT_BUFFER_SIZE", "4 K"},      {"VIADUCT_CREDITS", "0"},
        {"VIADUCT_CREDITS", "-3"},           {"VIADUCT_CREDITS", "many"},
        {"VIADUCT_TIMEOUT_MS", "0"},         {"VIADUCT_TIMEOUT_MS", "-1"},
        {"VIADUCT_TIMEOUT_MS", "soon"},      {"VIADUCT_SPIN_US", "-1"},
        {"VIADUCT_SPIN_US", "fast"},
    };
    for (const Bad &bad : cases) {
        INFO(bad.name << "=\"" << bad.value << "\"");
        unit::ScopedEnv env(bad.name, bad.value);
        msg_config_t c{};
        CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
        CHECK(same(c, fallback));
    }
}

TEST_CASE("one bad variable does not spoil the good ones", "[config]") {
    const msg_config_t fallback = defaults();
    unit::ScopedEnv bad("VIADUCT_CREDITS", "none");
    unit::ScopedEnv good("VIADUCT_EAGER_MAX", "2048");
    msg_config_t c{};
    CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
    CHECK(c.eager_max == 2048);
    CHECK(c.credits == fallback.credits);
}

TEST_CASE("msg_get_info reports the timeout the context uses", "[config]") {
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    c.timeout_ms = 4321;
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(&c, &ctx) == MSG_OK);
    msg_info_t info{};
    REQUIRE(msg_get_info(ctx, &info) == MSG_OK);
    CHECK(info.timeout_ms == 4321);
    CHECK(msg_finalize(ctx) == MSG_OK);
    msg_destroy(ctx);
}
