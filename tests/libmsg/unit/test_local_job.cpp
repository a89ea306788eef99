// A process started without a job environment is a job of one: rank 0 of 1, a barrier of one,
// and messages to itself.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "local_job.hpp"

TEST_CASE("a process with no job environment is rank 0 of a job of 1", "[local_job]") {
    unit::LocalJob job;
    int rank = -1, size = -1;
    CHECK(msg_rank(job.ctx(), &rank) == MSG_OK);
    CHECK(msg_size(job.ctx(), &size) == MSG_OK);
    CHECK(rank == 0);
    CHECK(size == 1);
    msg_info_t info{};
    REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
    CHECK(info.rank == 0);
    CHECK(info.size == 1);
    CHECK(info.provider[0] != '\0');
    CHECK(std::memchr(info.provider, '\0', sizeof info.provider) != nullptr);
    CHECK(info.eager_max > 0);
    CHECK(info.buffer_size > info.eager_max);
    CHECK(info.connect_seconds >= 0.0);
    msg_stats_t stats{};
    CHECK(msg_get_stats(job.ctx(), &stats) == MSG_OK);
    CHECK(stats.peers_failed == 0);
    CHECK(msg_barrier(job.ctx()) == MSG_OK);
    CHECK(msg_finalize(job.ctx()) == MSG_OK);
}

TEST_CASE("a job of one reports the transport it uses: none, as self", "[local_job]") {
    // Whatever transport and provider the settings name, a job of one opens neither.
    for (const char *transport : {"auto", "ofi", "verbs", "shm"}) {
        INFO("VIADUCT_TRANSPORT=" << transport);
        unit::ScopedEnv named("VIADUCT_TRANSPORT", transport);
        unit::ScopedEnv provider("VIADUCT_PROVIDER", "tcp");
        unit::LocalJob job;
        msg_info_t info{};
        REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
        CHECK(std::strcmp(info.transport, "self") == 0);
        CHECK(std::strcmp(info.provider, "self") == 0);
        CHECK(msg_finalize(job.ctx()) == MSG_OK);
    }
}

TEST_CASE("msg_init and msg_destroy can be repeated in one process", "[local_job]") {
    for (int i = 0; i < 3; ++i) {
        unit::LocalJob job;
        int size = 0;
        CHECK(msg_size(job.ctx(), &size) == MSG_OK);
        CHECK(size == 1);
    }
}

TEST_CASE("a rank can send to itself, eager and long", "[local_job]") {
    unit::LocalJob job;
    msg_info_t info{};
    REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
    unit::LocalCq cq(job.ctx());
    for (size_t size :
         {size_t{0}, size_t{1}, info.eager_max, info.eager_max + 1, 3 * info.buffer_size + 1}) {
        INFO("size " << size);
        std::vector<unsigned char> out(size + 1), in(size + 1);
        for (size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>(i * 7 + 3);
        REQUIRE(msg_irecv(job.ctx(), 0, 4, in.data(), size, cq.get(), &in) == MSG_OK);
        REQUIRE(msg_isend(job.ctx(), 0, 4, out.data(), size, cq.get(), &out) == MSG_OK);
        for (int n = 0; n < 2; ++n) {
            msg_completion_t c{};
            REQUIRE(msg_cq_wait(cq.get(), 10000 * unit::slowdown(), &c) == MSG_OK);
            CHECK(c.status == MSG_OK);
            CHECK(c.source == 0);
            CHECK(c.tag == 4);
            CHECK(c.bytes == size);
            CHECK((c.cookie == &in || c.cookie == &out));
            CHECK(c.op == (c.cookie == &in ? MSG_OP_RECV : MSG_OP_SEND));
        }
        CHECK(std::memcmp(in.data(), out.data(), size) == 0);
    }
}

TEST_CASE("VIADUCT_BOOTSTRAP chooses how to join, and says when it cannot", "[local_job]") {
    msg_context_t *ctx = nullptr;
    SECTION("single: a job of one even inside another job's environment") {
        unit::ScopedEnv how("VIADUCT_BOOTSTRAP", "single");
        unit::ScopedEnv pmix_ns("PMIX_NAMESPACE", "not-a-real-job");
        unit::ScopedEnv pmix_rank("PMIX_RANK", "3");
        REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
        int size = 0;
        CHECK(msg_size(ctx, &size) == MSG_OK);
        CHECK(size == 1);
        msg_destroy(ctx);
    }
    SECTION("an unknown method is a configuration error") {
        unit::ScopedEnv how("VIADUCT_BOOTSTRAP", "carrier-pigeon");
        CHECK(msg_init(nullptr, &ctx) == MSG_ERR_CONFIG);
    }
    SECTION("pmix with no PMIx server to talk to fails instead of hanging") {
        unit::ScopedEnv how("VIADUCT_BOOTSTRAP", "pmix");
        int rc = msg_init(nullptr, &ctx);
        // MSG_ERR_NOT_SUPPORTED where libmsg was built without libpmix.
        CHECK((rc == MSG_ERR_BOOTSTRAP || rc == MSG_ERR_NOT_SUPPORTED));
    }
    SECTION("tcp without a coordinator address is a configuration error") {
        unit::ScopedEnv how("VIADUCT_BOOTSTRAP", "tcp");
        CHECK(msg_init(nullptr, &ctx) == MSG_ERR_CONFIG);
    }
}
