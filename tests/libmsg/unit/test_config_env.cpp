// msg_config_init: defaults, VIADUCT_* overrides that parse, and MSG_ERR_CONFIG (keeping the
// default) for each variable that does not.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "local_job.hpp"

namespace {

msg_config_t defaults() {
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    return c;
}

bool same_text(const char *a, const char *b) {
    return a == nullptr ? b == nullptr : b != nullptr && std::strcmp(a, b) == 0;
}

bool same(const msg_config_t &a, const msg_config_t &b) {
    return a.long_protocol == b.long_protocol && a.restricted == b.restricted &&
           a.eager_max == b.eager_max && a.buffer_size == b.buffer_size && a.credits == b.credits &&
           a.timeout_ms == b.timeout_ms && a.spin_us == b.spin_us &&
           (a.provider == nullptr) == (b.provider == nullptr) &&
           same_text(a.transport, b.transport) && same_text(a.bootstrap, b.bootstrap) &&
           a.heartbeat_ms == b.heartbeat_ms && a.unexpected_bytes == b.unexpected_bytes &&
           a.unexpected_count == b.unexpected_count && a.shm_cma == b.shm_cma &&
           same_text(a.verbs_device, b.verbs_device) && same_text(a.verbs_addr, b.verbs_addr) &&
           a.verbs_mr_cache == b.verbs_mr_cache &&
           a.verbs_mr_cache_bytes == b.verbs_mr_cache_bytes && a.debug == b.debug;
}

// A job of one on config; its msg_info_t.
msg_info_t info_of(const msg_config_t &config) {
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(&config, &ctx) == MSG_OK);
    msg_info_t info{};
    CHECK(msg_get_info(ctx, &info) == MSG_OK);
    CHECK(msg_finalize(ctx) == MSG_OK);
    msg_destroy(ctx);
    return info;
}

}  // namespace

TEST_CASE("msg_config_init gives sane defaults", "[config]") {
    msg_config_t c = defaults();
    CHECK(c.provider == nullptr);
    CHECK(c.long_protocol == MSG_PROTOCOL_AUTO);
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
        {"VIADUCT_PROTOCOL", "bogus"},
        {"VIADUCT_PROTOCOL", ""},
        {"VIADUCT_PROTOCOL", "RDMA "},
        {"VIADUCT_PROTOCOL", "rdma_write"},
        {"VIADUCT_PROTOCOL", "rdma-write "},
        {"VIADUCT_PROTOCOL", "write"},
        {"VIADUCT_RESTRICTED", "2"},
        {"VIADUCT_RESTRICTED", "yes"},
        {"VIADUCT_RESTRICTED", ""},
        {"VIADUCT_EAGER_MAX", "abc"},
        {"VIADUCT_EAGER_MAX", "-1"},
        {"VIADUCT_EAGER_MAX", "12x"},
        {"VIADUCT_EAGER_MAX", ""},
        {"VIADUCT_EAGER_MAX", "99999999999999999999999"},
        {"VIADUCT_BUFFER_SIZE", "lots"},
        {"VIADUCT_BUFFER_SIZE", "-4096"},
        {"VIADUCT_BUFFER_SIZE", "4 K"},
        {"VIADUCT_CREDITS", "0"},
        {"VIADUCT_CREDITS", "-3"},
        {"VIADUCT_CREDITS", "many"},
        {"VIADUCT_TIMEOUT_MS", "0"},
        {"VIADUCT_TIMEOUT_MS", "-1"},
        {"VIADUCT_TIMEOUT_MS", "soon"},
        {"VIADUCT_SPIN_US", "-1"},
        {"VIADUCT_SPIN_US", "fast"},
        {"VIADUCT_TRANSPORT", "bogus"},
        {"VIADUCT_TRANSPORT", "OFI"},
        {"VIADUCT_TRANSPORT", "verbs "},
        {"VIADUCT_BOOTSTRAP", "carrier-pigeon"},
        {"VIADUCT_BOOTSTRAP", "TCP"},
        {"VIADUCT_HEARTBEAT_MS", "0"},
        {"VIADUCT_HEARTBEAT_MS", "-5"},
        {"VIADUCT_HEARTBEAT_MS", "soon"},
        {"VIADUCT_HEARTBEAT_MS", "86400001"},
        {"VIADUCT_UNEXPECTED_BYTES", "0"},
        {"VIADUCT_UNEXPECTED_BYTES", "-1"},
        {"VIADUCT_UNEXPECTED_BYTES", "lots"},
        {"VIADUCT_UNEXPECTED_COUNT", "0"},
        {"VIADUCT_UNEXPECTED_COUNT", "12x"},
        {"VIADUCT_VERBS_MR_CACHE", "-1"},
        {"VIADUCT_VERBS_MR_CACHE", "many"},
        {"VIADUCT_VERBS_MR_CACHE_BYTES", "big"},
        {"VIADUCT_VERBS_MR_CACHE_BYTES", "1 G"},
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

TEST_CASE("msg_config_init's defaults for the transport, bootstrap, bounds and diagnostics",
          "[config]") {
    msg_config_t c = defaults();
    REQUIRE(c.transport != nullptr);
    CHECK(std::strcmp(c.transport, "auto") == 0);
    REQUIRE(c.bootstrap != nullptr);
    CHECK(std::strcmp(c.bootstrap, "auto") == 0);
    CHECK(c.heartbeat_ms == 0);
    CHECK(c.unexpected_bytes == (1u << 20));
    CHECK(c.unexpected_count == 1024);
    CHECK(c.shm_cma == 1);
    CHECK(c.verbs_device == nullptr);
    CHECK(c.verbs_addr == nullptr);
    CHECK(c.verbs_mr_cache == 64);
    CHECK(c.verbs_mr_cache_bytes == (size_t{1} << 30));
}

TEST_CASE("each setting read outside msg_config_t before is now a field set from its variable",
          "[config]") {
    unit::ScopedEnv transport("VIADUCT_TRANSPORT", "verbs");
    unit::ScopedEnv bootstrap("VIADUCT_BOOTSTRAP", "single");
    unit::ScopedEnv heartbeat("VIADUCT_HEARTBEAT_MS", "2500");
    unit::ScopedEnv ubytes("VIADUCT_UNEXPECTED_BYTES", "64K");
    unit::ScopedEnv ucount("VIADUCT_UNEXPECTED_COUNT", "3");
    unit::ScopedEnv cma("VIADUCT_SHM_CMA", "0");
    unit::ScopedEnv device("VIADUCT_VERBS_DEVICE", "rxe0");
    unit::ScopedEnv addr("VIADUCT_VERBS_ADDR", "10.0.0.7");
    unit::ScopedEnv cache("VIADUCT_VERBS_MR_CACHE", "0");
    unit::ScopedEnv cache_bytes("VIADUCT_VERBS_MR_CACHE_BYTES", "4096");
    unit::ScopedEnv debug("VIADUCT_DEBUG", "0");
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    REQUIRE(c.transport != nullptr);
    CHECK(std::strcmp(c.transport, "verbs") == 0);
    REQUIRE(c.bootstrap != nullptr);
    CHECK(std::strcmp(c.bootstrap, "single") == 0);
    CHECK(c.heartbeat_ms == 2500);
    CHECK(c.unexpected_bytes == 64 * 1024);
    CHECK(c.unexpected_count == 3);
    CHECK(c.shm_cma == 0);
    REQUIRE(c.verbs_device != nullptr);
    CHECK(std::strcmp(c.verbs_device, "rxe0") == 0);
    REQUIRE(c.verbs_addr != nullptr);
    CHECK(std::strcmp(c.verbs_addr, "10.0.0.7") == 0);
    CHECK(c.verbs_mr_cache == 0);
    CHECK(c.verbs_mr_cache_bytes == 4096);
    CHECK(c.debug == 0);
    {
        unit::ScopedEnv on("VIADUCT_DEBUG", "1");
        unit::ScopedEnv cma_on("VIADUCT_SHM_CMA", "yes");  // anything but 0 leaves them on
        unit::ScopedEnv ofi("VIADUCT_TRANSPORT", "ofi");
        for (const char *how : {"auto", "tcp", "pmix", "single"}) {
            unit::ScopedEnv method("VIADUCT_BOOTSTRAP", how);
            msg_config_t d{};
            REQUIRE(msg_config_init(&d) == MSG_OK);
            CHECK(d.debug == 1);
            CHECK(d.shm_cma == 1);
            CHECK(std::strcmp(d.transport, "ofi") == 0);
            CHECK(std::strcmp(d.bootstrap, how) == 0);
        }
    }
}

TEST_CASE("an empty VIADUCT_* variable that always meant unset still does", "[config]") {
    const msg_config_t fallback = defaults();
    for (const char *name :
         {"VIADUCT_TRANSPORT", "VIADUCT_BOOTSTRAP", "VIADUCT_HEARTBEAT_MS",
          "VIADUCT_UNEXPECTED_BYTES", "VIADUCT_UNEXPECTED_COUNT", "VIADUCT_VERBS_DEVICE",
          "VIADUCT_VERBS_ADDR", "VIADUCT_VERBS_MR_CACHE", "VIADUCT_VERBS_MR_CACHE_BYTES"}) {
        INFO(name << "=\"\"");
        unit::ScopedEnv env(name, "");
        msg_config_t c{};
        CHECK(msg_config_init(&c) == MSG_OK);
        CHECK(same(c, fallback));
    }
}

TEST_CASE("msg_get_info reports the settings the context runs with", "[config]") {
    msg_config_t c = defaults();
    c.transport = "verbs";  // a job of one opens no transport, so any build takes it
    c.bootstrap = "single";
    c.credits = 5;
    c.spin_us = 7;
    c.heartbeat_ms = 2500;
    c.unexpected_bytes = 12345;
    c.unexpected_count = 6;
    c.shm_cma = 0;
    c.verbs_mr_cache = 9;
    c.verbs_mr_cache_bytes = 1u << 20;
    c.debug = 0;
    msg_info_t info = info_of(c);
    CHECK(std::strcmp(info.transport, "self") == 0);
    CHECK(std::strcmp(info.bootstrap, "single") == 0);
    CHECK(std::strcmp(info.provider, "self") == 0);
    CHECK(info.credits == 5);
    CHECK(info.spin_us == 7);
    CHECK(info.heartbeat_ms == 2500);
    CHECK(info.unexpected_bytes == 12345);
    CHECK(info.unexpected_count == 6);
    CHECK(info.shm_cma == 0);
    CHECK(info.verbs_mr_cache == 9);
    CHECK(info.verbs_mr_cache_bytes == (1u << 20));
    CHECK(info.debug == 0);

    // What the settings resolve to: MSG_SPIN_AUTO, a heartbeat period of 0
    // (the larger of the timeout and 10 s), one below 100 ms, no transport (self).
    c = defaults();
    c.transport = nullptr;
    c.timeout_ms = 20000;
    info = info_of(c);
    CHECK(std::strcmp(info.transport, "self") == 0);
    CHECK(std::strcmp(info.bootstrap, "single") == 0);  // auto, with no job around
    CHECK(info.spin_us == 200);
    CHECK(info.heartbeat_ms == 20000);
    CHECK(info.shm_cma == 1);
    c.timeout_ms = 4321;
    CHECK(info_of(c).heartbeat_ms == 10000);
    c.heartbeat_ms = 50;
    CHECK(info_of(c).heartbeat_ms == 100);
}

TEST_CASE("msg_init(NULL) runs with the VIADUCT_* variables and reports them", "[config]") {
    unit::ScopedEnv transport("VIADUCT_TRANSPORT", "verbs");
    unit::ScopedEnv bootstrap("VIADUCT_BOOTSTRAP", "single");
    unit::ScopedEnv heartbeat("VIADUCT_HEARTBEAT_MS", "777");
    unit::ScopedEnv ubytes("VIADUCT_UNEXPECTED_BYTES", "5000");
    unit::ScopedEnv ucount("VIADUCT_UNEXPECTED_COUNT", "11");
    unit::ScopedEnv cma("VIADUCT_SHM_CMA", "0");
    unit::ScopedEnv cache("VIADUCT_VERBS_MR_CACHE", "2");
    unit::ScopedEnv cache_bytes("VIADUCT_VERBS_MR_CACHE_BYTES", "1M");
    unit::ScopedEnv spin("VIADUCT_SPIN_US", "33");
    unit::ScopedEnv credits("VIADUCT_CREDITS", "4");
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    msg_info_t info{};
    REQUIRE(msg_get_info(ctx, &info) == MSG_OK);
    CHECK(std::strcmp(info.transport, "self") == 0);  // a job of one opens none
    CHECK(std::strcmp(info.bootstrap, "single") == 0);
    CHECK(info.heartbeat_ms == 777);
    CHECK(info.unexpected_bytes == 5000);
    CHECK(info.unexpected_count == 11);
    CHECK(info.shm_cma == 0);
    CHECK(info.verbs_mr_cache == 2);
    CHECK(info.verbs_mr_cache_bytes == (1u << 20));
    CHECK(info.spin_us == 33);
    CHECK(info.credits == 4);
    CHECK(msg_finalize(ctx) == MSG_OK);
    msg_destroy(ctx);
}

TEST_CASE("msg_init(NULL) fails with MSG_ERR_CONFIG on a bad new variable", "[config]") {
    for (const char *name : {"VIADUCT_TRANSPORT", "VIADUCT_HEARTBEAT_MS",
                             "VIADUCT_UNEXPECTED_BYTES", "VIADUCT_VERBS_MR_CACHE"}) {
        INFO(name << "=nonsense");
        unit::ScopedEnv env(name, "nonsense");
        msg_context_t *ctx = nullptr;
        CHECK(msg_init(nullptr, &ctx) == MSG_ERR_CONFIG);
        CHECK(ctx == nullptr);
    }
}

TEST_CASE("the message trace: off by default, VIADUCT_TRACE and VIADUCT_TRACE_RECORDS",
          "[config]") {
    msg_config_t c = defaults();
    CHECK(c.trace == nullptr);
    CHECK(c.trace_records == 1000000);
    unit::ScopedEnv path("VIADUCT_TRACE", "/tmp/job.%r.csv");
    unit::ScopedEnv records("VIADUCT_TRACE_RECORDS", "64K");
    msg_config_t d{};
    REQUIRE(msg_config_init(&d) == MSG_OK);
    REQUIRE(d.trace != nullptr);
    CHECK(std::strcmp(d.trace, "/tmp/job.%r.csv") == 0);
    CHECK(d.trace_records == 64 * 1024);
    unit::ScopedEnv none("VIADUCT_TRACE_RECORDS", "0");
    msg_config_t e{};
    CHECK(msg_config_init(&e) == MSG_ERR_CONFIG);
    CHECK(e.trace_records == 1000000);
}

TEST_CASE("every protocol has one name, and VIADUCT_PROTOCOL takes each", "[config]") {
    const std::pair<int, const char *> names[] = {{MSG_PROTOCOL_SENDRECV, "sendrecv"},
                                                  {MSG_PROTOCOL_RDMA, "rdma"},
                                                  {MSG_PROTOCOL_RDMA_WRITE, "rdma-write"},
                                                  {MSG_PROTOCOL_AUTO, "auto"}};
    for (const auto &[protocol, name] : names) {
        INFO(name);
        REQUIRE(msg_protocol_name(protocol) != nullptr);
        CHECK(std::strcmp(msg_protocol_name(protocol), name) == 0);
        unit::ScopedEnv env("VIADUCT_PROTOCOL", name);
        CHECK(defaults().long_protocol == protocol);
    }
    CHECK(msg_protocol_name(-1) == nullptr);
    CHECK(msg_protocol_name(4) == nullptr);
    unit::ScopedEnv bad("VIADUCT_PROTOCOL", "rdma_write");
    msg_config_t c{};
    CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
    CHECK(c.long_protocol == MSG_PROTOCOL_AUTO);
}

TEST_CASE("msg_get_protocol_table: one range for a configured protocol, auto's table else",
          "[config]") {
    for (int protocol : {MSG_PROTOCOL_SENDRECV, MSG_PROTOCOL_RDMA, MSG_PROTOCOL_RDMA_WRITE}) {
        msg_config_t c = defaults();
        c.long_protocol = protocol;
        msg_context_t *ctx = nullptr;
        REQUIRE(msg_init(&c, &ctx) == MSG_OK);
        msg_protocol_range_t r[4]{};
        size_t n = 0;
        REQUIRE(msg_get_protocol_table(ctx, r, 4, &n) == MSG_OK);
        CHECK(n == 1);
        CHECK(r[0].max_bytes == SIZE_MAX);
        CHECK(r[0].protocol == protocol);
        msg_destroy(ctx);
    }
    // A job of one has no fabric: auto's table for no fabric in particular, ending at SIZE_MAX,
    // ascending, each range's protocol a real one.
    unit::LocalJob job;
    size_t n = 0;
    REQUIRE(msg_get_protocol_table(job.ctx(), nullptr, 0, &n) == MSG_OK);
    REQUIRE(n >= 1);
    std::vector<msg_protocol_range_t> r(n + 1, msg_protocol_range_t{7, 7});
    size_t again = 0;
    REQUIRE(msg_get_protocol_table(job.ctx(), r.data(), n, &again) == MSG_OK);
    CHECK(again == n);
    CHECK(r[n - 1].max_bytes == SIZE_MAX);
    CHECK(r[n].max_bytes == 7);  // nothing written past max
    for (size_t i = 0; i < n; ++i) {
        CHECK((r[i].protocol == MSG_PROTOCOL_SENDRECV || r[i].protocol == MSG_PROTOCOL_RDMA ||
               r[i].protocol == MSG_PROTOCOL_RDMA_WRITE));
        if (i > 0) CHECK(r[i].max_bytes > r[i - 1].max_bytes);
    }
    CHECK(msg_get_protocol_table(nullptr, r.data(), 1, &n) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_protocol_table(job.ctx(), nullptr, 1, &n) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_protocol_table(job.ctx(), r.data(), 1, nullptr) == MSG_ERR_INVALID_ARG);
}
