// Helpers for in-process tests: a job of one that is always released, environment variables set
// for one scope, and a steady clock.
#pragma once

#include <msg/msg.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace unit {

class LocalJob {
  public:
    LocalJob() {
        REQUIRE(msg_init(nullptr, &ctx_) == MSG_OK);
        REQUIRE(ctx_ != nullptr);
    }
    ~LocalJob() {
        if (ctx_ != nullptr) msg_destroy(ctx_);
    }
    LocalJob(const LocalJob &) = delete;
    LocalJob &operator=(const LocalJob &) = delete;
    msg_context_t *ctx() const { return ctx_; }

  private:
    msg_context_t *ctx_ = nullptr;
};

class LocalCq {
  public:
    explicit LocalCq(msg_context_t *ctx) {
        REQUIRE(msg_cq_create(ctx, &cq_) == MSG_OK);
        REQUIRE(cq_ != nullptr);
    }
    ~LocalCq() {
        if (cq_ != nullptr) msg_cq_destroy(cq_);
    }
    LocalCq(const LocalCq &) = delete;
    LocalCq &operator=(const LocalCq &) = delete;
    msg_cq_t *get() const { return cq_; }

  private:
    msg_cq_t *cq_ = nullptr;
};

// Sets (or, with nullopt, removes) one variable and restores it at scope end.
class ScopedEnv {
  public:
    ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
        if (const char *old = getenv(name)) old_ = old;
        if (value)
            setenv(name, value->c_str(), 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            setenv(name_.c_str(), old_->c_str(), 1);
        else
            unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    std::string name_;
    std::optional<std::string> old_;
};

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// VIADUCT_TEST_SLOWDOWN: timing slack for sanitizer builds.
inline int slowdown() {
    const char *v = getenv("VIADUCT_TEST_SLOWDOWN");
    int f = v != nullptr ? atoi(v) : 1;
    return f >= 1 ? f : 1;
}

}  // namespace unit
