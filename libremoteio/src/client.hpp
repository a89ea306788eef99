// The requesting side: issues requests (command + data, or remote I/O on a
// peer's export) to any rank, and completes each on its caller's CQ once its
// reply is in. Its libmsg parts finish on a callback CQ of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "parts.hpp"
#include "rio/rio.h"
#include "stats.hpp"

namespace remoteio {

// One request to issue: where it goes, what it carries, where its reply lands.
struct Request {
    int rank = 0;
    int target = RIO_TARGET_SHADOW;
    uint32_t command = 0;
    const void *data = nullptr;  // the request data (a write's bytes), len bytes
    size_t len = 0;
    void *reply = nullptr;  // the reply data lands here, up to reply_capacity bytes
    size_t reply_capacity = 0;
    msg_cq_t *cq = nullptr;  // the completion goes here, with cookie
    void *cookie = nullptr;
    // Remote I/O commands: the export and the byte range within it.
    uint64_t handle = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
};

// A request this process issued, from issue until its completion is posted.
struct Outgoing {
    uint64_t id = 0;
    int rank = 0;
    uint32_t command = 0;
    bool is_write = false;
    size_t write_len = 0;
    char *reply_buf = nullptr;
    size_t reply_capacity = 0;
    msg_cq_t *cq = nullptr;
    void *cookie = nullptr;
    std::vector<char> request_msg;  // header + inline data
    std::vector<char> reply_msg;    // reply header (+ inline data)
    Part header_part{PartKind::ReplyHeader, this};
    Part data_part{PartKind::ReplyData, this};
    Part send_part{PartKind::RequestSend, this};
    // Parts in flight plus one held by the issuing call; the one who drops it
    // to zero posts the completion.
    std::atomic<int> pending{1};
    std::atomic<int> error{0};            // first failure of any part
    int reply_status = MSG_ERR_PROTOCOL;  // until a valid reply header arrives
    uint64_t reply_len = 0;               // the reply's full size
    size_t delivered = 0;                 // reply bytes now in reply_buf
};

class Client {
  public:
    Client(msg_context_t *msg, int size, size_t inline_max, Stats &stats)
        : msg_(msg), size_(size), inline_max_(inline_max), stats_(stats) {}
    // Frees the callback CQ; requests libmsg may still name are left allocated.
    ~Client();
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    // Creates the callback CQ the requests' parts finish on.
    int open();
    // Any thread. A non-zero return means no completion will come.
    int issue(const Request &req);

    // Finalize: no new requests from now on ...
    void close() { state_ = State::Closing; }
    // ... wait, at most `limit`, for the outstanding ones (false: some remain) ...
    bool wait_idle(std::chrono::milliseconds limit);
    // ... and, once finalize is over, refuse with MSG_ERR_FINALIZED.
    void mark_finalized() { state_ = State::Finalized; }
    bool finalized() const { return state_ == State::Finalized; }

    // The libmsg context is gone: completes every outstanding request with
    // `status`, as their parts will never come back.
    void fail_all(int status);

  private:
    enum class State { Open, Closing, Finalized };

    std::unique_ptr<Outgoing> prepare(const Request &req, uint32_t tag_base) const;
    void start(Outgoing *out, const Request &req, uint32_t tag_base);
    void forget(Outgoing *out);
    // The dispatcher of the callback CQ: runs on whichever thread moves
    // libmsg forward, under libmsg's lock, so it only does bookkeeping and
    // posts completions.
    static void on_part(void *arg, const msg_completion_t *c);
    void on_reply_header(Outgoing *out, const msg_completion_t &c);
    void drop_pending(Outgoing *out);
    void fail_part(Outgoing *out, int status);
    void complete(Outgoing *out);

    msg_context_t *msg_;
    int size_;
    size_t inline_max_;
    Stats &stats_;
    msg_cq_t *part_cq_ = nullptr;
    std::atomic<State> state_{State::Open};

    std::mutex mu_;
    std::condition_variable idle_cv_;
    std::unordered_map<uint64_t, std::unique_ptr<Outgoing>> outgoing_;
    uint64_t next_id_ = 1;
    std::atomic<uint64_t> next_tag_block_{0};
};

}  // namespace remoteio
