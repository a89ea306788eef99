// The shared utilities: clock, paths, environment parsing and the one-operation wait.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <optional>
#include <thread>

#include "msg_internal/one_shot.hpp"
#include "scoped_env.hpp"
#include "viaduct/clock.hpp"
#include "viaduct/env.hpp"
#include "viaduct/path.hpp"

using testing_env::ScopedEnv;

TEST_CASE("seconds on the monotonic clock only move forward", "[clock]") {
    const auto start = viaduct::Clock::now();
    const double a = viaduct::now_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const double b = viaduct::now_seconds();
    CHECK(b > a);
    CHECK(viaduct::seconds_since(start) >= 0.002);
}

TEST_CASE("a path splits into its directory and last component", "[path]") {
    using viaduct::split_path;
    CHECK(split_path("file").dir == ".");
    CHECK(split_path("file").base == "file");
    CHECK(split_path("/file").dir == "/");
    CHECK(split_path("/file").base == "file");
    CHECK(split_path("a/b/c.dat").dir == "a/b");
    CHECK(split_path("a/b/c.dat").base == "c.dat");
    CHECK(split_path("/abs/dir/").dir == "/abs/dir");
    CHECK(split_path("/abs/dir/").base == "");
    CHECK(viaduct::path_dir("x/y") == "x");
    CHECK(viaduct::path_base("x/y") == "y");
}

TEST_CASE("sizes take a K/M/G binary suffix, also as KiB or KB, and nothing else", "[env]") {
    unsigned long long n = 7;
    using viaduct::env::parse_size;
    CHECK((parse_size("0", &n) && n == 0));
    CHECK((parse_size("12", &n) && n == 12));
    CHECK((parse_size("4k", &n) && n == 4096));
    CHECK((parse_size("3M", &n) && n == 3ull << 20));
    CHECK((parse_size("2g", &n) && n == 2ull << 30));
    CHECK((parse_size("16KiB", &n) && n == 16384));
    CHECK((parse_size("16KB", &n) && n == 16384));
    CHECK((parse_size("1GiB", &n) && n == 1ull << 30));
    CHECK((parse_size("100B", &n) && n == 100));
    n = 99;
    CHECK_FALSE(parse_size("", &n));
    CHECK_FALSE(parse_size("-1", &n));
    CHECK_FALSE(parse_size("k", &n));
    CHECK_FALSE(parse_size("4XB", &n));
    CHECK_FALSE(parse_size("4Ki", &n));
    CHECK_FALSE(parse_size("4KBB", &n));
    CHECK_FALSE(parse_size("4 ", &n));
    CHECK_FALSE(parse_size("99999999999999999999", &n));
    CHECK_FALSE(parse_size("17179869184G", &n));  // overflows 64 bits
    CHECK(n == 99);
}

TEST_CASE("counts take a decimal k/M/G/T suffix, or Ki/Mi/Gi/Ti, and nothing else", "[env]") {
    unsigned long long n = 7;
    using viaduct::env::parse_count;
    CHECK((parse_count("0", &n) && n == 0));
    CHECK((parse_count("4000", &n) && n == 4000));
    CHECK((parse_count("4k", &n) && n == 4000));
    CHECK((parse_count("1M", &n) && n == 1000000));
    CHECK((parse_count("2g", &n) && n == 2000000000));
    CHECK((parse_count("1T", &n) && n == 1000000000000ull));
    CHECK((parse_count("4Ki", &n) && n == 4096));
    CHECK((parse_count("1Mi", &n) && n == 1ull << 20));
    n = 99;
    CHECK_FALSE(parse_count("", &n));
    CHECK_FALSE(parse_count("M", &n));
    CHECK_FALSE(parse_count("4KB", &n));  // bytes are a SIZE, not a count
    CHECK_FALSE(parse_count("4KiB", &n));
    CHECK_FALSE(parse_count("4X", &n));
    CHECK_FALSE(parse_count("20000000T", &n));  // overflows 64 bits
    CHECK(n == 99);
}

TEST_CASE("variables read as text, size, flag and positive number", "[env]") {
    const char *name = "VIADUCT_COMMON_TEST_VAR";
    bool valid = false;
    SECTION("unset: every reader gives its default") {
        ScopedEnv e(name, std::nullopt);
        CHECK(viaduct::env::get(name) == nullptr);
        CHECK(viaduct::env::text(name, "dflt") == "dflt");
        CHECK_FALSE(viaduct::env::size(name, &valid).has_value());
        CHECK(valid);
        CHECK(viaduct::env::flag(name, true));
        CHECK(viaduct::env::positive(name, 5) == 5);
    }
    SECTION("empty: unset for all but the flag, for which it is on") {
        ScopedEnv e(name, "");
        CHECK(viaduct::env::get(name) == nullptr);
        CHECK(viaduct::env::get(name, false) != nullptr);
        CHECK(viaduct::env::text(name, "dflt") == "dflt");
        CHECK_FALSE(viaduct::env::size(name, &valid).has_value());
        CHECK(valid);
        CHECK(viaduct::env::flag(name, false));
    }
    SECTION("a size") {
        ScopedEnv e(name, "64K");
        CHECK(viaduct::env::text(name) == "64K");
        CHECK(viaduct::env::size(name, &valid) == 65536ull);
        CHECK(valid);
        CHECK(viaduct::env::positive(name, 3) == 3);  // a suffix is no plain number
    }
    SECTION("not a size") {
        ScopedEnv e(name, "lots");
        CHECK_FALSE(viaduct::env::size(name, &valid).has_value());
        CHECK_FALSE(valid);
    }
    SECTION("size forms: binary suffixes in either case, with iB or B (KB is binary too)") {
        auto parsed = [](const char *text) {
            unsigned long long v = 0;
            return viaduct::env::parse_size(text, &v) ? std::optional(v) : std::nullopt;
        };
        CHECK(parsed("4096") == 4096ull);
        CHECK(parsed("16K") == 16384ull);
        CHECK(parsed("16KiB") == 16384ull);
        CHECK(parsed("16k") == 16384ull);
        CHECK(parsed("1g") == 1ull << 30);
        CHECK(parsed("1G") == 1ull << 30);
        CHECK(parsed("2T") == 2ull << 40);
        CHECK(parsed("512B") == 512ull);
        CHECK(parsed("4KB") == 4096ull);
        CHECK(parsed("4kB") == 4096ull);
        for (const char *bad : {"", "K", "-1", "+4", " 4", "4 K", "4X", "4KiBs", "4Ki", "4KBB",
                                "1e3", "99999999999T"})
            CHECK_FALSE(parsed(bad).has_value());
    }
    SECTION("flags: 0 is off, anything else on") {
        {
            ScopedEnv e(name, "0");
            CHECK_FALSE(viaduct::env::flag(name, true));
        }
        ScopedEnv e(name, "yes");
        CHECK(viaduct::env::flag(name, false));
    }
    SECTION("positive numbers") {
        {
            ScopedEnv e(name, "4");
            CHECK(viaduct::env::positive(name, 1) == 4);
        }
        {
            ScopedEnv e(name, "0");
            CHECK(viaduct::env::positive(name, 1) == 1);
        }
        ScopedEnv e(name, "-2");
        CHECK(viaduct::env::positive(name, 1) == 1);
    }
}

TEST_CASE("one_shot waits for the one operation it issues", "[one_shot]") {
    ScopedEnv single("VIADUCT_BOOTSTRAP", "single");
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    SECTION("a posted entry comes back with its status and bytes") {
        msg_completion_t got{};
        const int rc = viaduct::one_shot(
            ctx,
            [](msg_cq_t *cq) {
                msg_completion_t c{};
                c.op = MSG_OP_USER;
                c.status = MSG_ERR_TRUNCATED;
                c.bytes = 42;
                return msg_cq_post(cq, &c);
            },
            [&](const msg_completion_t &c) { got = c; });
        CHECK(rc == MSG_ERR_TRUNCATED);
        CHECK(got.bytes == 42);
    }
    SECTION("an issue that fails is returned, and nothing is waited for") {
        bool done = false;
        const int rc = viaduct::one_shot(
            ctx, [](msg_cq_t *) { return MSG_ERR_INVALID_ARG; },
            [&](const msg_completion_t &) { done = true; });
        CHECK(rc == MSG_ERR_INVALID_ARG);
        CHECK_FALSE(done);
    }
    SECTION("a send to itself and a receive, each as one blocking call") {
        const char text[] = "one shot";
        char buf[16] = {};
        msg_cq_t *cq = nullptr;
        REQUIRE(msg_cq_create(ctx, &cq) == MSG_OK);
        REQUIRE(msg_irecv(ctx, 0, 9, buf, sizeof buf, cq, nullptr) == MSG_OK);
        CHECK(viaduct::one_shot(ctx, [&](msg_cq_t *c) {
                  return msg_isend(ctx, 0, 9, text, sizeof text, c, nullptr);
              }) == MSG_OK);
        msg_completion_t c{};
        REQUIRE(msg_cq_wait(cq, -1, &c) == MSG_OK);
        CHECK(c.bytes == sizeof text);
        CHECK(std::string(buf) == text);
        msg_cq_destroy(cq);
    }
    msg_destroy(ctx);
}
