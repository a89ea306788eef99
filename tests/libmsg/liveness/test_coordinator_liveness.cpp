// The coordinator's side of liveness, in one process: a rank silent after its first heartbeat
// is failed, and a barrier a rank fails during ends with MSG_ERR_PEER_FAILED on every rank
// while one opened after the failure still completes.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "../bootstrap/coordinator_fixture.hpp"
#include "bootstrap/bootstrap.hpp"
#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"
#include "bootstrap/messages.hpp"
#include "msg/msg.h"

using namespace msg;
using Clock = std::chrono::steady_clock;
using coordtest::job_key;
using coordtest::patience_ms;
using coordtest::real_rank;

namespace {

// A rank speaking the wire by hand, so the test decides when it talks and when it is silent.
class RawRank {
  public:
    RawRank(int port, int rank, int size) {
        std::string error;
        fd_ = boot::connect_with_retry("127.0.0.1", std::to_string(port), patience_ms(), &error);
        REQUIRE(fd_ >= 0);
        boot::Frame f = next();
        boot::Nonce challenge;
        REQUIRE(f.type == boot::FrameType::Challenge);
        REQUIRE(boot::decode_challenge(f.body, &challenge) == nullptr);
        boot::Hello h;
        h.rank = static_cast<uint32_t>(rank);
        h.size = static_cast<uint32_t>(size);
        h.nonce = boot::make_nonce();
        h.mac = boot::hello_mac(job_key(), challenge, h.nonce, h.rank, h.size);
        send(boot::FrameType::Hello, boot::encode_hello(h));
        REQUIRE(next().type == boot::FrameType::Welcome);
    }
    ~RawRank() {
        if (fd_ >= 0) ::close(fd_);
    }
    void send(boot::FrameType t, const std::vector<uint8_t> &body) {
        REQUIRE(boot::write_frame(fd_, t, body));
    }
    // The next frame that is not a heartbeat, unless heartbeats are asked for.
    boot::Frame next(bool want_heartbeat = false) {
        auto deadline = Clock::now() + std::chrono::milliseconds(patience_ms());
        boot::Frame f;
        for (;;) {
            while (reader_.next(f))
                if (want_heartbeat || f.type != boot::FrameType::Heartbeat) return f;
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            REQUIRE(left.count() > 0);
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) > 0) REQUIRE(reader_.fill(fd_));
        }
    }

  private:
    int fd_ = -1;
    boot::FrameReader reader_;
};

std::unique_ptr<boot::Coordinator> serve(int size, int heartbeat_ms) {
    boot::CoordinatorLimits limits;
    limits.heartbeat_ms = heartbeat_ms;
    return coordtest::serve(size, limits);
}

}  // namespace

TEST_CASE("a rank silent after its first heartbeat is reported failed to the others",
          "[liveness_coordinator]") {
    auto coord = serve(2, 300);
    auto rank0 = real_rank(coord->port(), 0, 2);
    std::mutex mu;
    std::condition_variable cv;
    int failed = -1;
    rank0->on_peer_failed([&](int r) {
        std::lock_guard<std::mutex> lk(mu);
        failed = r;
        cv.notify_all();
    });
    {
        RawRank rank1(coord->port(), 1, 2);
        // It promises a heartbeat every 75 ms, gets the coordinator's answer, then says
        // nothing more while keeping its connection open, as a stopped process would.
        rank1.send(boot::FrameType::Heartbeat, boot::encode_heartbeat(300));
        REQUIRE(rank1.next(true).type == boot::FrameType::Heartbeat);
        std::unique_lock<std::mutex> lk(mu);
        REQUIRE(
            cv.wait_for(lk, std::chrono::milliseconds(patience_ms()), [&] { return failed >= 0; }));
        CHECK(failed == 1);
    }
    // The barrier completes among the live ranks: rank 1 had failed before it began.
    std::string error;
    CHECK(rank0->barrier(patience_ms(), &error) == MSG_OK);
    rank0->leave();
}

TEST_CASE("a barrier a rank fails during ends with MSG_ERR_PEER_FAILED on every rank",
          "[liveness_coordinator]") {
    // Heartbeats as slow as patience itself: only report_failure fails a rank here.
    auto coord = serve(3, patience_ms());
    auto rank0 = real_rank(coord->port(), 0, 3);
    auto rank2 = real_rank(coord->port(), 2, 3);
    RawRank rank1(coord->port(), 1, 3);
    // Rank 1 enters barrier 0; the answer to its first heartbeat, sent behind it on the same
    // connection, proves the coordinator has taken its arrival in.
    rank1.send(boot::FrameType::Barrier, boot::encode_seq(0));
    rank1.send(boot::FrameType::Heartbeat, boot::encode_heartbeat(patience_ms()));
    REQUIRE(rank1.next(true).type == boot::FrameType::Heartbeat);
    coord->report_failure(2);

    std::string error;
    CHECK(rank0->barrier(patience_ms(), &error) == MSG_ERR_PEER_FAILED);
    CHECK(error.find("rank 2 failed") != std::string::npos);
    boot::Frame f = rank1.next();
    while (f.type == boot::FrameType::Failed) f = rank1.next();
    REQUIRE(f.type == boot::FrameType::BarrierFailed);
    uint32_t seq = 99;
    int lost = -1;
    REQUIRE(boot::decode_barrier_failed(f.body, 3, &seq, &lost) == nullptr);
    CHECK(seq == 0);
    CHECK(lost == 2);

    // A barrier begun after the failure is an ordinary one among the survivors.
    rank1.send(boot::FrameType::Barrier, boot::encode_seq(1));
    CHECK(rank0->barrier(patience_ms(), &error) == MSG_OK);
    f = rank1.next();
    CHECK(f.type == boot::FrameType::BarrierDone);
    rank0->leave();
    rank1.send(boot::FrameType::Bye, {});
}
