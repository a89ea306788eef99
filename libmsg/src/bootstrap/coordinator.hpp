// The job coordinator: ranks connect to it over TCP to exchange fabric
// addresses (allgather), synchronize (barrier), and hear about failed peers.
// msgrun hosts one; so can rank 0 or a standalone `msgrun --serve`.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/job_key.hpp"

namespace msg::boot {

// What a connection that has not yet joined the job may cost the coordinator:
// anyone who can reach the port can open one.
struct CoordinatorLimits {
    // Connections accepted but not yet joined; beyond it the oldest is closed.
    int max_pending = 64;
    // Time a new connection has to join before it is closed.
    int hello_timeout_ms = 5000;
    // A rank that sends heartbeats and then nothing for this long (or for the
    // silence it announced, if longer) has failed; 0: msg::heartbeat_ms(-1)
    // (common/config.hpp), 10 s.
    int heartbeat_ms = 0;
};

class Coordinator {
  public:
    // Listens on host:port (port "0": any free port) for a job of `size` ranks
    // that must all join within join_timeout_ms of the first one, each proving it holds `key`.
    static std::unique_ptr<Coordinator> listen(const std::string &host, const std::string &port,
                                               int size, int join_timeout_ms, const JobKey &key,
                                               std::string *error,
                                               const CoordinatorLimits &limits = {});
    ~Coordinator();
    Coordinator(const Coordinator &) = delete;
    Coordinator &operator=(const Coordinator &) = delete;

    int port() const { return port_; }

    // Serves on a background thread until every rank has left or failed.
    void start();
    // Waits for the serving thread; returns true if every rank left in order.
    bool join();
    // Declares a rank failed (e.g. its process exited without leaving).
    // Thread safe.
    void report_failure(int rank);
    // True once the serving thread has ended.
    bool finished() const { return finished_; }
    // After join(): whether the join timeout (counted from the first rank's arrival) passed
    // before every rank had joined.
    bool join_timed_out() const { return join_timed_out_; }
    // After join(): the ranks that joined and then ended without leaving in order (no Bye:
    // no msg_finalize), in rank order.
    const std::vector<int> &left_without_finalize() const { return left_without_finalize_; }
    // After join(): the ranks that never joined the job (no msg_init reached it), in rank order.
    const std::vector<int> &never_joined() const { return never_joined_; }
    // Makes the serving thread stop soon (job is being torn down).
    void stop();

  private:
    Coordinator() = default;
    void serve();
    struct State;
    void accept_one(State &s, std::chrono::steady_clock::time_point &paused_until);
    void take_reported_failures(State &s);
    bool poll_once(State &s, std::chrono::steady_clock::time_point &accept_paused_until);
    int listen_fd_ = -1;
    int wake_fd_ = -1;
    int port_ = 0;
    int size_ = 0;
    int join_timeout_ms_ = 0;
    CoordinatorLimits limits_;
    JobKey key_{};
    std::thread thread_;
    std::mutex mu_;
    std::vector<int> reported_failures_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> finished_{false};
    bool clean_ = false;
    bool join_timed_out_ = false;
    std::vector<int> left_without_finalize_;
    std::vector<int> never_joined_;
};

}  // namespace msg::boot
