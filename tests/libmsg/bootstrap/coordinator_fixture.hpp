// What the coordinator tests share: a job key, a coordinator on loopback, real ranks that
// join it over TCP, and the patience that only ends a test that has already failed.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/coordinator.hpp"
#include "bootstrap/job_key.hpp"
#include "msg/msg.h"
#include "viaduct/env.hpp"

namespace coordtest {

inline int slowdown() {
    return static_cast<int>(viaduct::env::positive("VIADUCT_TEST_SLOWDOWN", 1));
}

// Generous bounds: they only end a test that has already failed.
inline int patience_ms() {
    return 30000 * slowdown();
}

inline const msg::boot::JobKey &job_key() {
    static const msg::boot::JobKey k = msg::boot::make_job_key();
    return k;
}

// A coordinator for a job of `size` on an ephemeral loopback port, serving.
inline std::unique_ptr<msg::boot::Coordinator> serve(int size,
                                                     const msg::boot::CoordinatorLimits &limits) {
    std::string error;
    auto c = msg::boot::Coordinator::listen("127.0.0.1", "0", size, patience_ms(), job_key(),
                                            &error, limits);
    INFO(error);
    REQUIRE(c);
    c->start();
    return c;
}

// Rank `rank` of `size` joined, through the real TCP bootstrap, to the coordinator on `port`.
inline std::unique_ptr<msg::Bootstrap> real_rank(int port, int rank, int size) {
    msg::TcpJob job;
    job.host = "127.0.0.1";
    job.port = std::to_string(port);
    job.rank = rank;
    job.size = size;
    job.key = job_key();
    std::unique_ptr<msg::Bootstrap> b;
    std::string error;
    const int rc = msg::connect_tcp_bootstrap(job, patience_ms(), &b, &error);
    INFO("rank " << rank << ": " << error);
    REQUIRE(rc == MSG_OK);
    return b;
}

}  // namespace coordtest
