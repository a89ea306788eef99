// Whereabouts and the node's watch on the monitor (see liveness.hpp).
#include "liveness.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "messages.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/test_hold.hpp"

namespace sortapp::cluster {

namespace {

std::mutex where_mu;
std::string where_who = "sortapp job", where_phase;

}  // namespace

void set_whereabouts(const std::string &who, const std::string &phase) {
    {
        std::lock_guard<std::mutex> lk(where_mu);
        where_who = who;
        where_phase = phase;
    }
    test_hold(who, phase);
}

void set_phase(const std::string &phase) {
    std::string who;
    {
        std::lock_guard<std::mutex> lk(where_mu);
        where_phase = phase;
        who = where_who;
    }
    test_hold(who, phase);
}

std::string whereabouts() {
    std::lock_guard<std::mutex> lk(where_mu);
    return where_phase.empty() ? where_who : where_who + ", " + where_phase;
}

void answer_ping(rio_t *rio, rio_incoming_t *in, void *) {
    rio_reply(rio, in, RIO_OK, nullptr, 0);
}

struct Watch::State {
    rio_t *rio;
    msg_context_t *msg;
    int rank, stall_ms;
    std::string what;
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;
    std::thread thread;
    char reply[64];

    bool stopping() {
        std::lock_guard<std::mutex> lk(mu);
        return stop;
    }

    // False when the watch ended with a question still unanswered (its buffer must live on).
    bool run() {
        msg_cq_t *cq = nullptr;
        if (msg_cq_create(msg, &cq) != MSG_OK) return true;
        using clock = std::chrono::steady_clock;
        const auto period = std::chrono::milliseconds(std::max(stall_ms / 4, 1));
        for (;;) {
            const auto asked = clock::now();
            int rc = rio_request(rio, rank, RIO_TARGET_SHADOW, kCmdPing, nullptr, 0, reply,
                                 sizeof reply, cq, nullptr);
            if (rc != RIO_OK && !stopping()) fail(rc);
            // Wait for the answer in short slices; once stopping, any outcome is fine.
            msg_completion_t c{};
            for (bool waiting = rc == RIO_OK; waiting;) {
                rc = msg_cq_wait(cq, 100, &c);
                if (rc == MSG_OK) break;
                const bool late = clock::now() - asked > std::chrono::milliseconds(stall_ms);
                if (rc == MSG_ERR_TIMEOUT && !late) continue;
                if (!stopping()) fail(rc);
                if (rc == MSG_ERR_TIMEOUT) return false;
                waiting = false;
            }
            // Any answer, even a refusal, says the process is alive; a libmsg failure says not.
            if (rc == MSG_OK && c.status < 0 && c.status > RIO_ERR_BAD_HANDLE &&
                c.status != MSG_ERR_TRUNCATED && !stopping())
                fail(c.status);
            std::unique_lock<std::mutex> lk(mu);
            if (cv.wait_for(lk, period, [this] { return stop; })) break;
        }
        msg_cq_destroy(cq);
        return true;
    }

    [[noreturn]] void fail(int status) {
        std::string why = status == MSG_ERR_TIMEOUT ? what + " stopped answering for " +
                                                          std::to_string(stall_ms / 1000) + " s"
                          : status == MSG_ERR_PEER_FAILED ? what + " exited or was killed"
                                                          : what + ": " + rio_strerror(status);
        cleanup::abort_process(
            1, "sortapp: " + whereabouts() + ": " + why + "; removed what this node created");
    }
};

Watch::Watch(rio_t *rio, msg_context_t *msg, int rank, int stall_ms, std::string what)
    : state_(std::make_shared<State>()) {
    State &s = *state_;
    s.rio = rio;
    s.msg = msg;
    s.rank = rank;
    s.stall_ms = stall_ms;
    s.what = std::move(what);
    s.thread = std::thread([st = state_] {
        // A question still out when the watch ends keeps its reply buffer to the end.
        if (!st->run()) {
            static std::mutex mu;
            static std::vector<std::shared_ptr<State>> kept;
            std::lock_guard<std::mutex> lk(mu);
            kept.push_back(st);
        }
    });
}

Watch::~Watch() {
    {
        std::lock_guard<std::mutex> lk(state_->mu);
        state_->stop = true;
    }
    state_->cv.notify_all();
    state_->thread.join();
}

}  // namespace sortapp::cluster
