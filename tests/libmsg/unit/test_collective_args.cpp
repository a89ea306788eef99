// The collectives' argument checks, in a job of one: NULL buffers with a length, a root outside
// the job, an element type or reduction that is none (and bitwise ops on floating types), user
// reductions' codes; refused calls leave nothing on the CQ. And a job of one's collectives
// complete with their results and a completion naming the call's cookie.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <cstdint>

#include "local_job.hpp"

namespace {

void add_ints(const void *in, void *inout, size_t count, void *) {
    const auto *a = static_cast<const int32_t *>(in);
    auto *b = static_cast<int32_t *>(inout);
    for (size_t i = 0; i < count; ++i) b[i] += a[i];
}

}  // namespace

TEST_CASE("collectives refuse NULL buffers, roots outside the job and bad handles",
          "[collective_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    char b[8] = {};
    size_t counts[1] = {1}, displs[1] = {0};
    CHECK(msg_bcast(nullptr, b, 1, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_ibcast(ctx, b, 1, 0, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_bcast(ctx, nullptr, 1, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_reduce(ctx, nullptr, b, 1, MSG_INT32, MSG_SUM, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_reduce(ctx, b, nullptr, 1, MSG_INT32, MSG_SUM, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_allreduce(ctx, nullptr, b, 1, MSG_INT32, MSG_SUM) == MSG_ERR_INVALID_ARG);
    CHECK(msg_allreduce(ctx, b, nullptr, 1, MSG_INT32, MSG_SUM) == MSG_ERR_INVALID_ARG);
    CHECK(msg_gather(ctx, nullptr, 1, b, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_gather(ctx, b, 1, nullptr, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_allgather(ctx, b, 1, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_scatter(ctx, nullptr, 1, b, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_scatter(ctx, b, 1, nullptr, 0) == MSG_ERR_INVALID_ARG);
    CHECK(msg_alltoall(ctx, nullptr, 1, b) == MSG_ERR_INVALID_ARG);
    CHECK(msg_alltoallv(ctx, nullptr, counts, displs, b, counts, displs) == MSG_ERR_INVALID_ARG);
    CHECK(msg_alltoallv(ctx, b, nullptr, displs, b, counts, displs) == MSG_ERR_INVALID_ARG);
    CHECK(msg_alltoallv(ctx, b, counts, displs, b, counts, nullptr) == MSG_ERR_INVALID_ARG);
    // A size that overflows size_t once multiplied by the element size.
    CHECK(msg_allreduce(ctx, b, b, SIZE_MAX / 2, MSG_INT64, MSG_SUM) == MSG_ERR_INVALID_ARG);
    for (int root : {-1, 1, 1000}) {
        INFO("root " << root);
        CHECK(msg_bcast(ctx, b, 1, root) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_reduce(ctx, b, b, 1, MSG_INT32, MSG_SUM, root) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_gather(ctx, b, 1, b, root) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_scatter(ctx, b, 1, b, root) == MSG_ERR_UNKNOWN_RANK);
    }
    msg_completion_t c{};
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("collectives refuse element types and reductions that are none", "[collective_args]") {
    unit::LocalJob job;
    msg_context_t *ctx = job.ctx();
    double d[2] = {1, 2}, out[2] = {};
    for (int type : {0, 7, -1}) {
        INFO("type " << type);
        CHECK(msg_allreduce(ctx, d, out, 1, type, MSG_SUM) == MSG_ERR_INVALID_ARG);
    }
    for (int op : {0, 6, -1, 0x100, 0x7fffffff}) {
        INFO("op " << op);
        CHECK(msg_allreduce(ctx, d, out, 1, MSG_DOUBLE, op) == MSG_ERR_INVALID_ARG);
        CHECK(msg_reduce(ctx, d, out, 1, MSG_DOUBLE, op, 0) == MSG_ERR_INVALID_ARG);
    }
    for (int type : {MSG_FLOAT, MSG_DOUBLE})
        for (int op : {MSG_BAND, MSG_BOR}) {
            INFO("type " << type << " op " << op);
            CHECK(msg_allreduce(ctx, d, out, 1, type, op) == MSG_ERR_INVALID_ARG);
        }
    int code = 0;
    CHECK(msg_reduction_create(ctx, nullptr, nullptr, &code) == MSG_ERR_INVALID_ARG);
    CHECK(msg_reduction_create(ctx, add_ints, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    REQUIRE(msg_reduction_create(ctx, add_ints, nullptr, &code) == MSG_OK);
    int32_t in[3] = {1, 2, 3}, sum[3] = {};
    CHECK(msg_allreduce(ctx, in, sum, 3, MSG_INT32, code) == MSG_OK);
    CHECK((sum[0] == 1 && sum[1] == 2 && sum[2] == 3));
    CHECK(msg_reduction_free(ctx, code) == MSG_OK);
    CHECK(msg_reduction_free(ctx, code) == MSG_ERR_INVALID_ARG);
    CHECK(msg_allreduce(ctx, in, sum, 3, MSG_INT32, code) == MSG_ERR_INVALID_ARG);
}

TEST_CASE("a job of one's collectives copy and complete on the CQ with the cookie",
          "[collective_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    int64_t in[4] = {5, -6, 7, 8}, out[4] = {};
    int cookie = 0;
    REQUIRE(msg_iallreduce(ctx, in, out, 4, MSG_INT64, MSG_MAX, cq.get(), &cookie) == MSG_OK);
    msg_completion_t c{};
    REQUIRE(msg_cq_wait(cq.get(), 5000, &c) == MSG_OK);
    CHECK(c.op == MSG_OP_COLLECTIVE);
    CHECK(c.status == MSG_OK);
    CHECK(c.cookie == &cookie);
    CHECK(c.bytes == sizeof out);
    CHECK(c.source == MSG_ANY_SOURCE);
    CHECK((out[0] == 5 && out[1] == -6 && out[3] == 8));
    char bytes[3] = {1, 2, 3}, got[3] = {};
    CHECK(msg_alltoall(ctx, bytes, 3, got) == MSG_OK);
    CHECK((got[0] == 1 && got[2] == 3));
    CHECK(msg_bcast(ctx, bytes, 0, 0) == MSG_OK);
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}
