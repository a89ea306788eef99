// Diagnostics: levels, VIADUCT_LOG_LEVEL and VIADUCT_DEBUG, the application's log handler, and
// the size spellings every size variable takes.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "local_job.hpp"

namespace {

struct Captured {
    std::mutex mu;
    std::vector<std::pair<int, std::string>> lines;
};

void capture(void *arg, int level, const char *message) {
    auto *c = static_cast<Captured *>(arg);
    std::lock_guard<std::mutex> lk(c->mu);
    c->lines.emplace_back(level, message);
}

// Installs the capturing handler for one scope.
class ScopedHandler {
  public:
    ScopedHandler() { REQUIRE(msg_set_log_handler(capture, &captured) == MSG_OK); }
    ~ScopedHandler() {
        msg_set_log_handler(nullptr, nullptr);
        msg_set_log_level(MSG_LOG_WARN);
    }
    Captured captured;
};

msg_info_t info_with_env() {
    unit::LocalJob job;
    msg_info_t info{};
    REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
    return info;
}

}  // namespace

TEST_CASE("VIADUCT_LOG_LEVEL and VIADUCT_DEBUG set the level", "[log]") {
    msg_config_t c{};
    REQUIRE(msg_config_init(&c) == MSG_OK);
    CHECK(c.log_level == MSG_LOG_WARN);
    CHECK(info_with_env().log_level == MSG_LOG_WARN);
    const std::pair<const char *, int> levels[] = {{"error", MSG_LOG_ERROR},
                                                   {"warn", MSG_LOG_WARN},
                                                   {"info", MSG_LOG_INFO},
                                                   {"debug", MSG_LOG_DEBUG}};
    for (const auto &[text, level] : levels) {
        INFO("VIADUCT_LOG_LEVEL=" << text);
        unit::ScopedEnv env("VIADUCT_LOG_LEVEL", text);
        REQUIRE(msg_config_init(&c) == MSG_OK);
        CHECK(c.log_level == level);
        CHECK(info_with_env().log_level == level);
    }
    {
        unit::ScopedEnv env("VIADUCT_LOG_LEVEL", "loud");
        CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
        CHECK(c.log_level == MSG_LOG_WARN);
    }
    unit::ScopedEnv debug("VIADUCT_DEBUG", "1");
    unit::ScopedEnv level("VIADUCT_LOG_LEVEL", "error");
    CHECK(info_with_env().log_level == MSG_LOG_DEBUG);
    CHECK(msg_set_log_level(0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_set_log_level(MSG_LOG_DEBUG + 1) == MSG_ERR_INVALID_ARG);
    REQUIRE(msg_set_log_level(MSG_LOG_WARN) == MSG_OK);
}

TEST_CASE("the log handler receives lines up to the level, without the rank prefix", "[log]") {
    ScopedHandler h;
    {
        // A bad variable is reported before any job exists: through the handler, as an error.
        unit::ScopedEnv env("VIADUCT_CREDITS", "many");
        msg_config_t c{};
        CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
    }
    {
        std::lock_guard<std::mutex> lk(h.captured.mu);
        REQUIRE(h.captured.lines.size() == 1);
        CHECK(h.captured.lines[0].first == MSG_LOG_ERROR);
        CHECK(h.captured.lines[0].second ==
              "VIADUCT_CREDITS=many is not valid: the configuration is refused (MSG_ERR_CONFIG)");
        h.captured.lines.clear();
    }
    {
        // Debug lines reach the handler only at the debug level.
        unit::ScopedEnv env("VIADUCT_LOG_LEVEL", "debug");
        unit::LocalJob job;
    }
    size_t debug_lines = 0;
    {
        std::lock_guard<std::mutex> lk(h.captured.mu);
        for (const auto &[lvl, text] : h.captured.lines) {
            debug_lines += lvl == MSG_LOG_DEBUG;
            CHECK(text.find("libmsg[") == std::string::npos);
        }
        CHECK(debug_lines > 0);
        h.captured.lines.clear();
    }
    {
        unit::ScopedEnv env("VIADUCT_LOG_LEVEL", "warn");
        unit::LocalJob job;
    }
    std::lock_guard<std::mutex> lk(h.captured.mu);
    for (const auto &[lvl, text] : h.captured.lines) CHECK(lvl <= MSG_LOG_WARN);
}

TEST_CASE("size variables take 16K, 16KiB, 16KB, 1g and a plain B", "[log]") {
    const std::pair<const char *, size_t> sizes[] = {
        {"16K", 16384},  {"16KiB", 16384}, {"16kib", 16384},   {"16KB", 16384},
        {"2048B", 2048}, {"1M", 1u << 20}, {"1MiB", 1u << 20}, {"1g", 1u << 30}};
    for (const auto &[text, value] : sizes) {
        INFO("VIADUCT_UNEXPECTED_BYTES=" << text);
        unit::ScopedEnv env("VIADUCT_UNEXPECTED_BYTES", text);
        msg_config_t c{};
        REQUIRE(msg_config_init(&c) == MSG_OK);
        CHECK(c.unexpected_bytes == value);
    }
    for (const char *bad : {"16Ki", "16iB", "16 KiB", "16KiBs", "KiB", "16Kb b"}) {
        INFO("VIADUCT_UNEXPECTED_BYTES=" << bad);
        unit::ScopedEnv env("VIADUCT_UNEXPECTED_BYTES", bad);
        msg_config_t c{};
        CHECK(msg_config_init(&c) == MSG_ERR_CONFIG);
    }
    // The case that used to fail msg_init: a job of one with VIADUCT_EAGER_MAX=16KiB.
    unit::ScopedEnv env("VIADUCT_EAGER_MAX", "16KiB");
    CHECK(info_with_env().eager_max == 16384);
}

TEST_CASE("a VIADUCT_* variable a typo away from a setting is named with the setting", "[log]") {
    ScopedHandler h;
    {
        unit::ScopedEnv typo("VIADUCT_PROVDER", "tcp");
        unit::ScopedEnv far("VIADUCT_SOMETHING_ELSE", "1");  // not a setting's typo: left alone
        msg_config_t c{};
        CHECK(msg_config_init(&c) == MSG_OK);
        CHECK(c.provider == nullptr);  // ignored, as the warning says
    }
    std::lock_guard<std::mutex> lk(h.captured.mu);
    REQUIRE(h.captured.lines.size() == 1);
    CHECK(h.captured.lines[0].first == MSG_LOG_WARN);
    CHECK(h.captured.lines[0].second ==
          "VIADUCT_PROVDER is not a libmsg setting and is ignored; did you mean VIADUCT_PROVIDER?");
}

TEST_CASE("a rank outside the job is named with the job's size", "[log]") {
    unit::LocalJob job;
    ScopedHandler h;
    char byte = 0;
    CHECK(msg_send(job.ctx(), 5, 0, &byte, 1) == MSG_ERR_UNKNOWN_RANK);
    msg_completion_t c{};
    CHECK(msg_probe(job.ctx(), -3, 0, 0, &c) == MSG_ERR_UNKNOWN_RANK);
    std::lock_guard<std::mutex> lk(h.captured.mu);
    REQUIRE(h.captured.lines.size() == 2);
    CHECK(h.captured.lines[0].first == MSG_LOG_ERROR);
    CHECK(h.captured.lines[0].second == "rank 5 is not in this job of 1 rank (0 to 0)");
    CHECK(h.captured.lines[1].second == "probe: rank -3 is not in this job of 1 rank (0 to 0)");
}
