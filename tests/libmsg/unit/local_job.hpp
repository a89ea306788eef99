// Helpers for in-process tests: a job of one that is always released, environment variables set
// for one scope, and a steady clock.
#pragma once

#include <msg/msg.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "scoped_env.hpp"
#include "viaduct/clock.hpp"
#include "viaduct/env.hpp"

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

using testing_env::ScopedEnv;
using viaduct::now_seconds;

// VIADUCT_TEST_SLOWDOWN: timing slack for sanitizer builds.
inline int slowdown() {
    return static_cast<int>(viaduct::env::positive("VIADUCT_TEST_SLOWDOWN", 1));
}

}  // namespace unit
