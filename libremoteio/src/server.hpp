// The serving side: the shadow thread, which receives every incoming request,
// forwards IPC to the worker thread's CQ, runs handlers and serves remote I/O
// on exported files itself, and sends the replies. Its work is split by file:
// server.cpp (the thread and receiving), server_io.cpp (remote I/O),
// server_reply.cpp (replies); each calls only the ones after it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "exports.hpp"
#include "file_io.hpp"
#include "parts.hpp"
#include "request_data.hpp"
#include "rio/rio.h"
#include "stats.hpp"
#include "wire.hpp"

namespace remoteio {
class Server;

// One of the shadow thread's posted receives for request headers.
struct RequestSlot {
    Part part{PartKind::RequestReceive, this};
    std::vector<char> buf;
    bool retired = false;
};
}  // namespace remoteio

// A request this process serves, from arrival until its reply is sent.
struct rio_incoming {
    remoteio::Server *owner = nullptr;
    int source = 0;
    remoteio::RequestHeader hdr{};
    remoteio::RequestData data;  // the request's data
    size_t held = 0;             // bytes of it counted against the requester's peer_memory
    remoteio::Part data_part{remoteio::PartKind::RequestData, this};
    remoteio::Part send_part{remoteio::PartKind::ReplySend, this};
    bool forwarded = false;  // handed to the worker thread
    bool replied = false;
    // Remote I/O.
    std::shared_ptr<remoteio::Export> exp;
    remoteio::IoRequest io;
    std::vector<char> io_buf;
    size_t io_done = 0;
    // The reply.
    std::vector<char> reply_msg;
    std::vector<char> reply_data;
    std::atomic<int> sends{0};
};

namespace remoteio {

class Server {
  public:
    // `api` is what handlers are given; `options` are complete (no zeros left).
    Server(rio_t *api, msg_context_t *msg, msg_cq_t *worker_cq, const rio_options_t &options,
           int size, size_t inline_max, ExportTable &exports, Stats &stats);
    // Frees the CQs; what libmsg may still name is left allocated.
    ~Server();
    Server(const Server &) = delete;
    Server &operator=(const Server &) = delete;

    // Creates the CQs and the file I/O and posts the request receives; on
    // failure nothing of it is left.
    int open();
    // The shadow thread. Returns MSG_OK when finalize stopped it, or the
    // libmsg error that ended it (the context is gone: nothing more moves).
    int run();
    // Asks the shadow thread to wind down, giving up on what is still in hand
    // at `deadline`.
    void stop(std::chrono::steady_clock::time_point deadline);
    // Why the shadow thread stopped early (RIO_ERR_TIMEOUT, a libmsg error) or 0.
    int stop_status() const { return stop_status_; }
    // After the shadow thread is joined.
    void close_file_io() { file_io_.reset(); }

    int set_handler(uint32_t command, rio_handler_fn fn, void *arg);
    // Any thread, once per request. copy: the data must be copied (the
    // caller's); else it stays valid until the request is released (its read
    // buffer, or its export's mapping). may_fall_back: if the data cannot be
    // sent, send nothing and return the error (the caller answers another
    // way); else the requester gets an error.
    int send_reply(rio_incoming *in, int status, const void *data, size_t len, bool copy = true,
                   bool may_fall_back = false);

  private:
    // server.cpp: the shadow thread's CQ and incoming requests.
    bool keep_winding_down(int *wait_ms);
    void on_event(const msg_completion_t &c);
    void drain_file_io();
    void post_request_slot(RequestSlot *slot);
    void undo_open();
    void on_request_header(RequestSlot *slot, const msg_completion_t &c);
    int accept(rio_incoming *in, const char *inline_data);
    void receive_request_data(rio_incoming *in);
    void on_request_data(rio_incoming *in, const msg_completion_t &c);
    // Counts `bytes` of request data against the requester's peer_memory;
    // false (nothing counted) if they do not fit.
    bool hold_request_data(rio_incoming *in, uint64_t bytes);
    // Drains a request's separate data into nothing (a refused request's
    // sender is not left waiting).
    void drain_request_data(rio_incoming *in);
    void dispatch(rio_incoming *in);
    void forward_to_worker(rio_incoming *in);
    void run_handler(rio_incoming *in);

    // server_io.cpp: remote I/O on exports.
    void serve_stat(rio_incoming *in);
    void serve_io(rio_incoming *in);
    int check_io(rio_incoming *in) const;
    bool send_resident(rio_incoming *in);
    void start_waiting_io();
    void submit_io(rio_incoming *in);
    void on_io_done(rio_incoming *in);

    // server_reply.cpp: replies.
    int send_reply_data(rio_incoming *in, ReplyHeader *h, int status, const void *data, bool copy,
                        bool may_fall_back);
    // The dispatcher of the reply CQ (a callback CQ): runs on whichever
    // thread moves libmsg forward, under libmsg's lock.
    static void on_reply_sent(void *arg, const msg_completion_t *c);
    void release_incoming(rio_incoming *in);

    rio_t *api_;
    msg_context_t *msg_;
    msg_cq_t *worker_cq_;
    const rio_options_t opts_;
    const size_t inline_max_;
    ExportTable &exports_;
    Stats &stats_;

    // What the shadow thread waits on: request headers and data, file I/O,
    // finalize's stop.
    msg_cq_t *shadow_cq_ = nullptr;
    // The sends of our replies finish here.
    msg_cq_t *reply_cq_ = nullptr;
    std::unique_ptr<FileIo> file_io_;

    std::atomic<bool> stopping_{false};  // the shadow thread was asked to wind down
    int stop_status_ = 0;
    // Winding down gives up on requests still in hand at this time (set before the stop).
    std::chrono::steady_clock::time_point stop_deadline_;

    // Requests we serve. `serving_` owns them; the shadow thread waits for
    // the ones still in its hands before it stops.
    std::mutex in_mu_;
    std::unordered_map<rio_incoming *, std::unique_ptr<rio_incoming>> serving_;
    std::atomic<int> in_shadow_hands_{0};
    // Request data held for each requesting rank (under in_mu_).
    std::vector<size_t> peer_held_;

    // The shadow thread's posted request receives.
    std::vector<std::unique_ptr<RequestSlot>> slots_;
    int slots_live_ = 0;

    // Server-side file I/O: shadow thread only.
    std::deque<rio_incoming *> io_waiting_;
    int io_in_flight_ = 0;
    size_t io_bytes_in_flight_ = 0;
    // Reads are sent from the exports' page-cache mappings until the
    // transport fails one (verbs cannot register a read-only file mapping);
    // then file I/O serves them all.
    bool mapped_sends_ = true;

    std::mutex handler_mu_;
    std::unordered_map<uint32_t, std::pair<rio_handler_fn, void *>> handlers_;
};

}  // namespace remoteio
