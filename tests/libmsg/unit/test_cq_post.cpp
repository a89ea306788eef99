// msg_cq_post: an entry posted from one thread wakes a waiter in another and arrives exactly as
// posted; under many posters and waiters each entry is delivered once.
#include <msg/msg.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "local_job.hpp"

namespace {

bool same_entry(const msg_completion_t &a, const msg_completion_t &b) {
    return a.op == b.op && a.status == b.status && a.source == b.source && a.tag == b.tag &&
           a.bytes == b.bytes && a.cookie == b.cookie && a.data == b.data;
}

}  // namespace

TEST_CASE("a posted entry wakes a blocked waiter and arrives as posted", "[cq_post]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    int anchor = 0;
    // Every field set, including ones a library might think it owns.
    const int op = GENERATE(MSG_OP_USER, MSG_OP_SEND, 42);
    INFO("op " << op);
    msg_completion_t posted{};
    posted.op = op;
    posted.status = MSG_ERR_PEER_FAILED;
    posted.source = 1234;
    posted.tag = 0x7654321;
    posted.bytes = 987654321;
    posted.cookie = &anchor;
    posted.data = 0xfeedfacecafebeefull;

    msg_completion_t got{};
    int rc = -999;
    double waited = 0;
    // Timed from before the thread starts: a thread that starts late still waited for the post.
    const double start = unit::now_seconds();
    std::thread waiter([&] {
        // No time limit: only the post can end this wait (meson's timeout catches a hang).
        rc = msg_cq_wait(cq.get(), -1, &got);
        waited = unit::now_seconds() - start;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double posted_at = unit::now_seconds();
    REQUIRE(msg_cq_post(cq.get(), &posted) == MSG_OK);
    waiter.join();
    const double woke_after = unit::now_seconds() - posted_at;
    CHECK(rc == MSG_OK);
    CHECK(same_entry(got, posted));
    // It really slept until the post, and the post really woke it.
    CHECK(waited >= 0.2);
    CHECK(woke_after < 0.5 * unit::slowdown());
}

TEST_CASE("entries posted by one thread come out in the order posted", "[cq_post]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    constexpr int kEntries = 100;
    for (int i = 0; i < kEntries; ++i) {
        msg_completion_t e{};
        e.op = MSG_OP_USER;
        e.data = static_cast<uint64_t>(i);
        REQUIRE(msg_cq_post(cq.get(), &e) == MSG_OK);
    }
    for (int i = 0; i < kEntries; ++i) {
        msg_completion_t e{};
        REQUIRE(msg_cq_wait(cq.get(), 0, &e) == MSG_OK);
        CHECK(e.data == static_cast<uint64_t>(i));
    }
    msg_completion_t none{};
    CHECK(msg_cq_wait(cq.get(), 0, &none) == MSG_ERR_TIMEOUT);
}

TEST_CASE("many posters and many waiters: every entry is delivered exactly once", "[cq_post]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    constexpr int kPosters = 3, kWaiters = 5, kPerPoster = 3000;
    constexpr uint64_t kStop = ~0ull;
    std::vector<std::atomic<int>> seen(kPosters * kPerPoster);
    std::atomic<int> failures{0}, stops{0};

    std::vector<std::thread> waiters;
    for (int w = 0; w < kWaiters; ++w) {
        waiters.emplace_back([&] {
            for (;;) {
                msg_completion_t e{};
                if (msg_cq_wait(cq.get(), 20000 * unit::slowdown(), &e) != MSG_OK) {
                    ++failures;
                    return;
                }
                if (e.data == kStop) {
                    ++stops;
                    return;
                }
                if (e.data >= seen.size() || e.op != MSG_OP_USER)
                    ++failures;
                else
                    seen[e.data].fetch_add(1);
            }
        });
    }
    std::vector<std::thread> posters;
    for (int p = 0; p < kPosters; ++p) {
        posters.emplace_back([&, p] {
            for (int i = 0; i < kPerPoster; ++i) {
                msg_completion_t e{};
                e.op = MSG_OP_USER;
                e.data = static_cast<uint64_t>(p * kPerPoster + i);
                if (msg_cq_post(cq.get(), &e) != MSG_OK) ++failures;
            }
        });
    }
    for (auto &t : posters) t.join();
    // Stop entries go in after all data entries; per-poster order lets each waiter stop once.
    for (int w = 0; w < kWaiters; ++w) {
        msg_completion_t e{};
        e.op = MSG_OP_USER;
        e.data = kStop;
        REQUIRE(msg_cq_post(cq.get(), &e) == MSG_OK);
    }
    for (auto &t : waiters) t.join();
    CHECK(failures == 0);
    CHECK(stops == kWaiters);
    int missing = 0, doubled = 0;
    for (auto &s : seen) {
        missing += s == 0;
        doubled += s > 1;
    }
    CHECK(missing == 0);
    CHECK(doubled == 0);
    msg_completion_t none{};
    CHECK(msg_cq_wait(cq.get(), 0, &none) == MSG_ERR_TIMEOUT);
}

TEST_CASE("canceling a CQ's receives completes the unmatched ones and spares the rest",
          "[cq_post]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    unit::LocalCq other(job.ctx());
    char a[16], b[16], c[16];
    int ca = 1, cb = 2, cc = 3;
    REQUIRE(msg_irecv(job.ctx(), 0, 5, a, sizeof a, cq.get(), &ca) == MSG_OK);
    REQUIRE(msg_irecv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, b, sizeof b, cq.get(), &cb) ==
            MSG_OK);
    REQUIRE(msg_irecv(job.ctx(), 0, 6, c, sizeof c, other.get(), &cc) == MSG_OK);

    size_t n = 99;
    REQUIRE(msg_cq_cancel_recvs(cq.get(), &n) == MSG_OK);
    CHECK(n == 2);
    std::vector<void *> cookies;
    for (int i = 0; i < 2; ++i) {
        msg_completion_t got{};
        REQUIRE(msg_cq_wait(cq.get(), 1000, &got) == MSG_OK);
        CHECK(got.op == MSG_OP_RECV);
        CHECK(got.status == MSG_ERR_CANCELED);
        cookies.push_back(got.cookie);
    }
    CHECK(((cookies[0] == &ca && cookies[1] == &cb) || (cookies[0] == &cb && cookies[1] == &ca)));
    msg_completion_t none{};
    CHECK(msg_cq_wait(cq.get(), 0, &none) == MSG_ERR_TIMEOUT);

    // The other CQ's receive is still posted and still matches.
    REQUIRE(msg_send(job.ctx(), 0, 6, "hello", 6) == MSG_OK);
    msg_completion_t got{};
    REQUIRE(msg_cq_wait(other.get(), 1000, &got) == MSG_OK);
    CHECK(got.status == MSG_OK);
    CHECK(got.cookie == &cc);
    CHECK(std::string(c) == "hello");
    // Nothing left to cancel; both CQs can go.
    REQUIRE(msg_cq_cancel_recvs(cq.get(), &n) == MSG_OK);
    CHECK(n == 0);
    CHECK(msg_cq_cancel_recvs(nullptr, &n) == MSG_ERR_INVALID_ARG);
}

TEST_CASE("a callback CQ hands each completion to its function instead of queueing it",
          "[cq_post]") {
    unit::LocalJob job;
    struct Seen {
        std::vector<msg_completion_t> entries;
    } seen;
    auto fn = [](void *arg, const msg_completion_t *c) {
        static_cast<Seen *>(arg)->entries.push_back(*c);
    };
    msg_cq_t *cq = nullptr;
    REQUIRE(msg_cq_create_callback(job.ctx(), fn, &seen, &cq) == MSG_OK);
    CHECK(msg_cq_create_callback(job.ctx(), nullptr, &seen, &cq) == MSG_ERR_INVALID_ARG);
    char buf[32] = {};
    int rc_cookie = 7, sc_cookie = 8;
    REQUIRE(msg_irecv(job.ctx(), 0, 9, buf, sizeof buf, cq, &rc_cookie) == MSG_OK);
    REQUIRE(msg_isend(job.ctx(), 0, 9, "callback", 9, cq, &sc_cookie) == MSG_OK);
    // A job of one completes self sends without a progress thread's help, but allow for one.
    for (int i = 0; i < 1000 && seen.entries.size() < 2; ++i) {
        msg_completion_t none;
        unit::LocalCq poke(job.ctx());
        msg_cq_wait(poke.get(), 1, &none);
    }
    REQUIRE(seen.entries.size() == 2);
    bool got_recv = false, got_send = false;
    for (const auto &c : seen.entries) {
        CHECK(c.status == MSG_OK);
        if (c.op == MSG_OP_RECV) got_recv = c.cookie == &rc_cookie && c.bytes == 9;
        if (c.op == MSG_OP_SEND) got_send = c.cookie == &sc_cookie;
    }
    CHECK(got_recv);
    CHECK(got_send);
    CHECK(std::string(buf) == "callback");
    // Posting calls the function too; waiting on such a CQ is refused.
    msg_completion_t mine{};
    mine.op = MSG_OP_USER;
    mine.data = 42;
    REQUIRE(msg_cq_post(cq, &mine) == MSG_OK);
    REQUIRE(seen.entries.size() == 3);
    CHECK(seen.entries.back().data == 42);
    msg_completion_t out;
    CHECK(msg_cq_wait(cq, 0, &out) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_destroy(cq) == MSG_OK);
}
