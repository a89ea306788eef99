// Bootstrap over TCP to the job coordinator (msgrun, or one started by hand).
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
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
        if (fd_ >= 0) ::close(fd_);
        if (hosted_) hosted_->join();
    }

    int start(const std::string &host, const std::string &port, bool host_coordinator,
              int timeout_ms, std::string *error) {
        if (host_coordinator && rank_ == 0) {
            hosted_ = boot::Coordinator::listen(host, port, size_, timeout_ms, error);
            if (!hosted_) return MSG_ERR_BOOTSTRAP;
            hosted_->start();
        }
        fd_ = boot::connect_with_retry(host, port, timeout_ms, error);
        if (fd_ < 0) return MSG_ERR_BOOTSTRAP;
        boot::set_socket_liveness(fd_, timeout_ms);
        std::vector<uint8_t> hello;
        boot::put_u32(hello, static_cast<uint32_t>(rank_));
        boot::put_u32(hello, static_cast<uint32_t>(size_));
        if (!boot::write_frame(fd_, FrameType::Hello, hello)) {
            *error = "cannot send to coordinator";
            return MSG_ERR_BOOTSTRAP;
        }
        reader_ = std::thread([this] { read_loop(); });
        return MSG_OK;
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }

    int allgather(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                  int timeout_ms, std::string *error) override {
        std::unique_lock<std::mutex> lk(mu_);
        uint32_t seq = next_gather_++;
        std::vector<uint8_t> body;
        boot::put_u32(body, seq);
        body.insert(body.end(), mine.begin(), mine.end());
        if (!send_locked(FrameType::Gather, body)) return lost(error);
        if (!wait_for(lk, timeout_ms, [&] { return gathers_.count(seq) != 0; }))
            return timed_out("allgather", timeout_ms, error);
        auto it = gathers_.find(seq);
        if (it == gathers_.end()) return lost(error);
        std::vector<uint8_t> res = std::move(it->second);
        gathers_.erase(it);
        size_t pos = 4;
        uint32_t n = 0;
        if (!boot::get_u32(res, pos, n) || static_cast<int>(n) != size_) return lost(error);
        all.assign(n, {});
        for (uint32_t r = 0; r < n; ++r) {
            uint32_t len = 0;
            if (pos >= res.size()) return lost(error);
            bool present = res[pos++] != 0;
            if (!boot::get_u32(res, pos, len) || pos + len > res.size()) return lost(error);
            if (!present) {
                *error = "rank " + std::to_string(r) + " failed during the job's start-up exchange";
                return MSG_ERR_PEER_FAILED;
            }
            all[r].assign(res.begin() + static_cast<long>(pos),
                          res.begin() + static_cast<long>(pos + len));
            pos += len;
        }
        return MSG_OK;
    }

    int barrier(int timeout_ms, std::string *error) override {
        std::unique_lock<std::mutex> lk(mu_);
        uint32_t seq = next_barrier_++;
        std::vector<uint8_t> body;
        boot::put_u32(body, seq);
        if (!send_locked(FrameType::Barrier, body)) return lost(error);
        if (!wait_for(lk, timeout_ms, [&] { return barriers_done_ > seq; }))
            return timed_out("barrier", timeout_ms, error);
        if (barriers_done_ <= seq) return lost(error);
        return MSG_OK;
    }

    void on_peer_failed(std::function<void(int)> callback) override {
        std::vector<int> already;
        {
            std::lock_guard<std::mutex> lk(mu_);
            callback_ = std::move(callback);
            already = failed_before_callback_;
        }
        for (int r : already) callback_(r);
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

    void read_loop() {
        boot::FrameReader reader;
        for (;;) {
            if (!reader.fill(fd_)) break;
            Frame f;
            while (reader.next(f)) handle(f);
        }
        std::vector<int> everyone;
        {
            std::lock_guard<std::mutex> lk(mu_);
            closed_ = true;
            if (!left_ && fatal_.empty()) fatal_ = "lost the connection to the job coordinator";
            // Without the coordinator nobody can report failures any more:
            // treat every peer as gone so nothing waits forever.
            if (!left_)
                for (int r = 0; r < size_; ++r)
                    if (r != rank_) everyone.push_back(r);
        }
        cv_.notify_all();
        for (int r : everyone) notify_failed(r);
    }

    void handle(const Frame &f) {
        size_t pos = 0;
        uint32_t v = 0;
        switch (f.type) {
            case FrameType::GatherResult:
                if (boot::get_u32(f.body, pos, v)) {
                    std::lock_guard<std::mutex> lk(mu_);
                    gathers_[v] = f.body;
                }
                cv_.notify_all();
                break;
            case FrameType::BarrierDone:
                if (boot::get_u32(f.body, pos, v)) {
                    std::lock_guard<std::mutex> lk(mu_);
                    if (v + 1 > barriers_done_) barriers_done_ = v + 1;
                }
                cv_.notify_all();
                break;
            case FrameType::Failed:
                if (boot::get_u32(f.body, pos, v) && static_cast<int>(v) < size_)
                    notify_failed(static_cast<int>(v));
                break;
            case FrameType::Error: {
                std::lock_guard<std::mutex> lk(mu_);
                fatal_ = "job coordinator: " + std::string(f.body.begin(), f.body.end());
                log_error("%s", fatal_.c_str());
                break;
            }
            default:
                log_error("coordinator sent an unknown frame type %d", static_cast<int>(f.type));
        }
    }

    void notify_failed(int r) {
        std::function<void(int)> cb;
        {
            std::lock_guard<std::mutex> lk(mu_);
            if (!callback_) {
                failed_before_callback_.push_back(r);
                return;
            }
            cb = callback_;
        }
        cb(r);
    }

    int rank_, size_;
    int fd_ = -1;
    std::unique_ptr<boot::Coordinator> hosted_;
    std::thread reader_;
    std::mutex mu_;
    std::condition_variable cv_;
    uint32_t next_gather_ = 0, next_barrier_ = 0, barriers_done_ = 0;
    std::map<uint32_t, std::vector<uint8_t>> gathers_;
    bool closed_ = false, left_ = false;
    std::string fatal_;
    std::function<void(int)> callback_;
    std::vector<int> failed_before_callback_;
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

int make_tcp_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap> *out, std::string *error) {
    const char *coord = std::getenv("VIADUCT_COORDINATOR");
    if (coord == nullptr || *coord == '\0') {
        *error = "VIADUCT_COORDINATOR is not set";
        return MSG_ERR_CONFIG;
    }
    std::string host, port;
    if (!boot::parse_host_port(coord, host, port)) {
        *error = std::string("VIADUCT_COORDINATOR=") + coord + " is not host:port";
        return MSG_ERR_CONFIG;
    }
    int size = 0, rank = 0;
    if (!env_int("VIADUCT_SIZE", 1, 1 << 20, &size, error)) return MSG_ERR_CONFIG;
    if (!env_int("VIADUCT_RANK", 0, size - 1, &rank, error)) return MSG_ERR_CONFIG;
    const char *hostflag = std::getenv("VIADUCT_COORDINATOR_HOST");
    bool host_it = hostflag != nullptr && std::string(hostflag) == "1";
    auto b = std::make_unique<TcpBootstrap>(rank, size);
    int rc = b->start(host, port, host_it, timeout_ms, error);
    if (rc != MSG_OK) return rc;
    *out = std::move(b);
    return MSG_OK;
}

}  // namespace msg
