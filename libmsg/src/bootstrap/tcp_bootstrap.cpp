// Bootstrap over TCP to the job coordinator (msgrun, or one started by hand).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"
#include "bootstrap/messages.hpp"
#include "common/config.hpp"
#include "common/log.hpp"
#include "msg/msg.h"

namespace msg {
namespace {

using boot::Frame;
using boot::FrameType;

class TcpBootstrap final : public Bootstrap {
  public:
    TcpBootstrap(int rank, int size) : rank_(rank), size_(size) {}
    ~TcpBootstrap() override {
        leave();
        if (reader_.joinable()) reader_.join();
        {
            std::lock_guard<std::mutex> lk(mu_);
            stopping_ = true;
        }
        notify_cv_.notify_all();
        if (notifier_.joinable()) notifier_.join();
        if (fd_ >= 0) ::close(fd_);
        if (hosted_) hosted_->join();
    }

    int start(const std::string &host, const std::string &port, bool host_coordinator,
              const boot::JobKey &key, int timeout_ms, int heartbeat_setting, std::string *error) {
        heartbeat_ms_ = msg::heartbeat_ms(timeout_ms, heartbeat_setting);
        if (host_coordinator && rank_ == 0) {
            // The coordinator we serve watches the ranks as we watch it.
            boot::CoordinatorLimits limits;
            limits.heartbeat_ms = heartbeat_ms_;
            hosted_ = boot::Coordinator::listen(host, port, size_, timeout_ms, key, error, limits);
            if (!hosted_) return MSG_ERR_BOOTSTRAP;
            hosted_->start();
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        fd_ = boot::connect_with_retry(host, port, timeout_ms, error);
        if (fd_ < 0) return MSG_ERR_BOOTSTRAP;
        boot::set_socket_liveness(fd_, timeout_ms);
        const std::string where = "the job coordinator at " + host + ":" + port;
        where_ = where;
        // Until the coordinator has proven it holds the key, it is a stranger:
        // its frames are small and nothing it says is believed.
        frames_.set_limit(boot::kMaxFrameBeforeHello);
        Frame f;
        int rc = handshake_frame(f, deadline, where, error);
        if (rc != MSG_OK) return rc;
        boot::Nonce challenge;
        if (f.type != FrameType::Challenge || boot::decode_challenge(f.body, &challenge)) {
            *error = where + " did not challenge this rank: not a viaduct job coordinator";
            return MSG_ERR_BOOTSTRAP;
        }
        boot::Hello hello;
        hello.rank = static_cast<uint32_t>(rank_);
        hello.size = static_cast<uint32_t>(size_);
        hello.nonce = boot::make_nonce();
        hello.mac = boot::hello_mac(key, challenge, hello.nonce, hello.rank, hello.size);
        if (!boot::write_frame(fd_, FrameType::Hello, boot::encode_hello(hello))) {
            *error = "cannot send to " + where;
            return MSG_ERR_BOOTSTRAP;
        }
        rc = handshake_frame(f, deadline, where, error);
        if (rc != MSG_OK) return rc;
        boot::Mac proof;
        if (f.type != FrameType::Welcome || boot::decode_welcome(f.body, &proof) ||
            !boot::mac_equal(
                proof, boot::welcome_mac(key, challenge, hello.nonce, hello.rank, hello.size))) {
            *error = where +
                     " did not prove it holds the job key: a wrong key, or not this job's "
                     "coordinator";
            return MSG_ERR_BOOTSTRAP;
        }
        frames_.set_limit(boot::kMaxFrame);
        // From here on both ends watch each other: the first heartbeat goes
        // out before anything else, so a rank stopped at any later moment is
        // noticed. A send the coordinator does not take within our own
        // heartbeat period fails rather than blocks.
        silence_ms_ = heartbeat_ms_;
        boot::set_send_timeout(fd_, heartbeat_ms_);
        if (!boot::write_frame(fd_, FrameType::Heartbeat, boot::encode_heartbeat(heartbeat_ms_))) {
            *error = "cannot send to " + where;
            return MSG_ERR_BOOTSTRAP;
        }
        failed_.assign(static_cast<size_t>(size_), false);
        notifier_ = std::thread([this] { notify_loop(); });
        reader_ = std::thread([this] { read_loop(); });
        return MSG_OK;
    }

    const char *method() const override { return "tcp"; }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    int allgather(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                  int timeout_ms, std::string *error) override {
        std::unique_lock<std::mutex> lk(mu_);
        uint32_t seq = next_gather_++;
        if (!send_locked(FrameType::Gather, boot::encode_gather(seq, mine))) return lost(error);
        if (!wait_for(lk, timeout_ms, [&] { return gathers_.count(seq) != 0; }))
            return timed_out("allgather", timeout_ms, error);
        auto it = gathers_.find(seq);
        if (it == gathers_.end()) return lost(error);
        boot::GatherResult res = std::move(it->second);
        gathers_.erase(it);
        for (size_t r = 0; r < res.present.size(); ++r)
            if (!res.present[r]) {
                *error = "rank " + std::to_string(r) + " failed during the job's start-up exchange";
                return MSG_ERR_PEER_FAILED;
            }
        all = std::move(res.data);
        return MSG_OK;
    }

    int barrier(int timeout_ms, std::string *error) override {
        std::unique_lock<std::mutex> lk(mu_);
        uint32_t seq = next_barrier_++;
        if (!send_locked(FrameType::Barrier, boot::encode_seq(seq))) return lost(error);
        if (!wait_for(lk, timeout_ms, [&] { return barriers_done_ > seq; }))
            return timed_out("barrier", timeout_ms, error);
        if (barriers_done_ <= seq) return lost(error);
        auto it = barrier_lost_.find(seq);
        if (it != barrier_lost_.end()) {
            *error = "rank " + std::to_string(it->second) +
                     " failed before reaching the barrier; the live ranks met without it";
            barrier_lost_.erase(it);
            return MSG_ERR_PEER_FAILED;
        }
        return MSG_OK;
    }

    void on_peer_failed(std::function<void(int)> callback) override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            callback_ = std::move(callback);
        }
        notify_cv_.notify_all();
    }

    void leave() override {
        std::lock_guard<std::mutex> lk(mu_);
        if (left_ || fd_ < 0) return;
        left_ = true;
        if (!closed_) boot::write_frame(fd_, FrameType::Bye, {});
        // Wakes the reader: the coordinator closes its side after Bye.
        ::shutdown(fd_, SHUT_WR);
    }

  private:
    template <typename Pred>
    bool wait_for(std::unique_lock<std::mutex> &lk, int timeout_ms, Pred done) {
        auto ready = [&] { return done() || closed_; };
        if (timeout_ms < 0) {
            cv_.wait(lk, ready);
            return true;
        }
        return cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), ready);
    }
    bool send_locked(FrameType t, const std::vector<uint8_t> &body) {
        return !closed_ && !left_ && boot::write_frame(fd_, t, body);
    }
    int lost(std::string *error) {
        *error = fatal_.empty() ? "lost the connection to the job coordinator" : fatal_;
        return MSG_ERR_BOOTSTRAP;
    }
    int timed_out(const char *what, int timeout_ms, std::string *error) {
        *error = std::string(what) + " through the coordinator timed out after " +
                 std::to_string(timeout_ms) + " ms";
        return MSG_ERR_TIMEOUT;
    }

    // One frame of the handshake, waited for until the deadline; an Error
    // frame (a refusal) becomes the error.
    int handshake_frame(Frame &f, std::chrono::steady_clock::time_point deadline,
                        const std::string &where, std::string *error) {
        while (!frames_.next(f)) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd p{fd_, POLLIN, 0};
            int n = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) {
                *error = where + " did not answer within the time-out";
                return MSG_ERR_TIMEOUT;
            }
            if (n < 0 || !frames_.fill(fd_)) {
                *error = frames_.bad() ? where + " sent an oversized frame"
                                       : where + " closed the connection";
                return MSG_ERR_BOOTSTRAP;
            }
        }
        if (f.type == FrameType::Error) {
            std::string text;
            boot::decode_error(f.body, &text);
            *error = where + " refused rank " + std::to_string(rank_) + ": " + text;
            return MSG_ERR_BOOTSTRAP;
        }
        return MSG_OK;
    }

    // Reads the coordinator's frames, sends our heartbeat every quarter of
    // heartbeat_ms_ and watches the coordinator's: this thread takes only the
    // bootstrap's own lock, briefly, never the fabric's (peer failures go to
    // the notifier thread), so a busy application cannot make it miss a beat.
    void read_loop() {
        using std::chrono::milliseconds;
        using std::chrono::steady_clock;
        boot::FrameReader &reader = frames_;
        const auto beat_every = milliseconds(std::max(heartbeat_ms_ / 4, 25));
        auto last_heard = steady_clock::now();
        auto next_beat = last_heard + beat_every;
        std::string silent;
        for (;;) {
            Frame f;
            bool ok = true;
            // Frames that came with the handshake's are already buffered.
            while (ok && reader.next(f)) ok = handle(f);
            if (!ok) {
                ::shutdown(fd_, SHUT_RDWR);
                break;
            }
            int allowed;
            bool leaving;
            {
                std::lock_guard<std::mutex> lk(mu_);
                allowed = silence_ms_;
                leaving = left_;
            }
            auto now = steady_clock::now();
            if (now >= next_beat && !leaving) {
                next_beat = now + beat_every;
                std::lock_guard<std::mutex> lk(mu_);
                if (!send_locked(FrameType::Heartbeat, boot::encode_heartbeat(heartbeat_ms_)) &&
                    !left_) {
                    if (fatal_.empty()) fatal_ = "cannot send to " + where_;
                    ::shutdown(fd_, SHUT_RDWR);
                    break;
                }
            }
            auto quiet = std::chrono::duration_cast<milliseconds>(now - last_heard);
            if (quiet.count() > allowed) {
                char secs[32];
                std::snprintf(secs, sizeof secs, "%.1f",
                              static_cast<double>(quiet.count()) / 1000.0);
                silent = where_ + " stopped answering for " + secs +
                         " s (stopped, or its host frozen); the job cannot go on";
                ::shutdown(fd_, SHUT_RDWR);
                break;
            }
            auto wait = std::min(next_beat - now, last_heard + milliseconds(allowed) - now);
            int wait_ms =
                static_cast<int>(std::chrono::duration_cast<milliseconds>(wait).count()) + 1;
            pollfd p{fd_, POLLIN, 0};
            int n = ::poll(&p, 1, std::max(wait_ms, 1));
            if (n < 0 && errno != EINTR) break;
            if (n <= 0) continue;
            if (!reader.fill(fd_)) break;
            last_heard = steady_clock::now();
        }
        std::vector<int> everyone;
        {
            std::lock_guard<std::mutex> lk(mu_);
            closed_ = true;
            if (!left_ && !silent.empty() && fatal_.empty()) fatal_ = silent;
            if (!left_ && fatal_.empty()) fatal_ = "lost the connection to the job coordinator";
            // Without the coordinator nobody can report failures any more:
            // treat every peer as gone so nothing waits forever.
            if (!left_) {
                log_error("%s; every peer is taken as failed", fatal_.c_str());
                for (int r = 0; r < size_; ++r)
                    if (r != rank_) everyone.push_back(r);
            }
        }
        cv_.notify_all();
        for (int r : everyone) notify_failed(r);
    }

    // A coordinator that breaks the protocol is not believed any further: the
    // connection is given up, which fails every peer.
    bool broken(const char *why) {
        std::lock_guard<std::mutex> lk(mu_);
        if (fatal_.empty()) fatal_ = std::string("the job coordinator sent a bad frame: ") + why;
        log_error("%s", fatal_.c_str());
        return false;
    }

    // Acts on one frame from the coordinator; false ends the connection.
    bool handle(const Frame &f) {
        switch (f.type) {
            case FrameType::GatherResult: {
                boot::GatherResult g;
                if (const char *why = boot::decode_gather_result(f.body, size_, &g))
                    return broken(why);
                {
                    std::lock_guard<std::mutex> lk(mu_);
                    if (g.seq >= next_gather_ || g.seq < gathers_done_)
                        return broken_locked("a GatherResult for no allgather in progress");
                    gathers_done_ = g.seq + 1;
                    gathers_[g.seq] = std::move(g);
                }
                cv_.notify_all();
                return true;
            }
            case FrameType::BarrierDone: {
                uint32_t v = 0;
                if (const char *why = boot::decode_seq(f.body, &v)) return broken(why);
                {
                    std::lock_guard<std::mutex> lk(mu_);
                    if (v >= next_barrier_ || v < barriers_done_)
                        return broken_locked("a BarrierDone for no barrier in progress");
                    barriers_done_ = v + 1;
                }
                cv_.notify_all();
                return true;
            }
            case FrameType::BarrierFailed: {
                uint32_t v = 0;
                int r = -1;
                if (const char *why = boot::decode_barrier_failed(f.body, size_, &v, &r))
                    return broken(why);
                {
                    std::lock_guard<std::mutex> lk(mu_);
                    if (v >= next_barrier_ || v < barriers_done_)
                        return broken_locked("a BarrierFailed for no barrier in progress");
                    barriers_done_ = v + 1;
                    barrier_lost_[v] = r;
                }
                cv_.notify_all();
                return true;
            }
            case FrameType::Heartbeat: {
                int theirs = 0;
                if (const char *why = boot::decode_heartbeat(f.body, &theirs)) return broken(why);
                std::lock_guard<std::mutex> lk(mu_);
                silence_ms_ = std::max(heartbeat_ms_, theirs);
                return true;
            }
            case FrameType::Failed: {
                int r = -1;
                if (const char *why = boot::decode_failed(f.body, size_, &r)) return broken(why);
                if (r != rank_) notify_failed(r);
                return true;
            }
            case FrameType::Error: {
                std::string text;
                if (const char *why = boot::decode_error(f.body, &text)) return broken(why);
                std::lock_guard<std::mutex> lk(mu_);
                fatal_ = "job coordinator: " + text;
                log_error("%s", fatal_.c_str());
                return true;
            }
            default:
                return broken("a frame type the coordinator does not send");
        }
    }
    bool broken_locked(const char *why) {
        if (fatal_.empty()) fatal_ = std::string("the job coordinator sent a bad frame: ") + why;
        log_error("%s", fatal_.c_str());
        return false;
    }

    // Queues a failed peer for the notifier thread: the callback takes the
    // fabric lock, which the reading thread must never wait for.
    void notify_failed(int r) {
        {
            std::lock_guard<std::mutex> lk(mu_);
            if (failed_[static_cast<size_t>(r)]) return;
            failed_[static_cast<size_t>(r)] = true;
            to_notify_.push_back(r);
        }
        notify_cv_.notify_all();
    }

    void notify_loop() {
        std::unique_lock<std::mutex> lk(mu_);
        for (;;) {
            notify_cv_.wait(lk, [&] { return stopping_ || (callback_ && !to_notify_.empty()); });
            if (stopping_) return;
            std::vector<int> batch;
            batch.swap(to_notify_);
            auto cb = callback_;
            lk.unlock();
            for (int r : batch) cb(r);
            lk.lock();
        }
    }

    int rank_, size_;
    int fd_ = -1;
    std::unique_ptr<boot::Coordinator> hosted_;
    std::thread reader_;
    boot::FrameReader frames_;  // the handshake's, then the reader thread's
    std::mutex mu_;
    std::condition_variable cv_;
    uint32_t next_gather_ = 0, next_barrier_ = 0, barriers_done_ = 0, gathers_done_ = 0;
    std::map<uint32_t, boot::GatherResult> gathers_;
    bool closed_ = false, left_ = false;
    std::string fatal_;
    std::function<void(int)> callback_;
    std::vector<bool> failed_;    // peers reported failed, each told once
    std::vector<int> to_notify_;  // reported, not yet given to callback_
    std::condition_variable notify_cv_;
    std::thread notifier_;
    bool stopping_ = false;
    std::map<uint32_t, int> barrier_lost_;  // barrier seq -> a rank that failed before it
    std::string where_;
    int heartbeat_ms_ = 0;  // ours; we send every quarter of it
    int silence_ms_ = 0;    // the coordinator may be silent this long (ours or its, the larger)
};

bool env_int(const char *name, long lo, long hi, int *out, std::string *error) {
    const char *v = std::getenv(name);
    if (v == nullptr) {
        *error = std::string(name) + " is not set";
        return false;
    }
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi) {
        *error = std::string(name) + "=" + v + " is not a number in [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]";
        return false;
    }
    *out = static_cast<int>(n);
    return true;
}

}  // namespace

int make_tcp_bootstrap(const BootstrapSettings &settings, std::unique_ptr<Bootstrap> *out,
                       std::string *error) {
    const char *coord = std::getenv("VIADUCT_COORDINATOR");
    if (coord == nullptr || *coord == '\0') {
        *error = "VIADUCT_COORDINATOR is not set";
        return MSG_ERR_CONFIG;
    }
    TcpJob job;
    if (!boot::parse_host_port(coord, job.host, job.port)) {
        *error = std::string("VIADUCT_COORDINATOR=") + coord + " is not host:port";
        return MSG_ERR_CONFIG;
    }
    if (!env_int("VIADUCT_SIZE", 1, boot::kMaxJobSize, &job.size, error)) return MSG_ERR_CONFIG;
    if (!env_int("VIADUCT_RANK", 0, job.size - 1, &job.rank, error)) return MSG_ERR_CONFIG;
    const char *hostflag = std::getenv("VIADUCT_COORDINATOR_HOST");
    job.host_coordinator = hostflag != nullptr && std::string(hostflag) == "1";
    if (!boot::load_job_key(&job.key, error)) return MSG_ERR_CONFIG;
    job.heartbeat_ms = settings.heartbeat_ms;
    return connect_tcp_bootstrap(job, settings.timeout_ms, out, error);
}

int connect_tcp_bootstrap(const TcpJob &job, int timeout_ms, std::unique_ptr<Bootstrap> *out,
                          std::string *error) {
    auto b = std::make_unique<TcpBootstrap>(job.rank, job.size);
    int rc = b->start(job.host, job.port, job.host_coordinator, job.key, timeout_ms,
                      job.heartbeat_ms, error);
    if (rc != MSG_OK) return rc;
    *out = std::move(b);
    return MSG_OK;
}

}  // namespace msg
