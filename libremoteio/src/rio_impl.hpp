// What stands behind rio_t: the requests this process has outstanding, the
// requests it is serving, its exports, and the shadow thread that moves them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "file_io.hpp"
#include "parts.hpp"
#include "request_data.hpp"
#include "rio/rio.h"
#include "wire.hpp"

namespace remoteio {

// An exported byte range of a file. Shared with the transfers using it, so a
// withdrawal never closes a descriptor under a transfer in flight.
struct Export {
    ~Export();
    // The range mapped read-only, so that data already in the page cache can
    // be sent straight from it (no copy, no file I/O). Null if mapping failed.
    void map_range();
    // The mapped bytes [offset, offset + len) of the range if every page of
    // them is in the page cache now, else null.
    const char *resident(uint64_t offset, size_t len) const;

    int fd = -1;
    uint64_t base = 0;
    uint64_t length = 0;
    bool writable = false;
    char *map = nullptr;  // the page holding `base`, mapped for map_len bytes
    size_t map_len = 0;
    size_t map_skew = 0;  // base's offset in its page
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

// One of the shadow thread's posted receives for request headers.
struct RequestSlot {
    Part part{PartKind::RequestReceive, this};
    std::vector<char> buf;
    bool retired = false;
};

}  // namespace remoteio

// A request this process serves, from arrival until its reply is sent.
struct rio_incoming {
    rio_t *owner = nullptr;
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

struct rio {
    ~rio();

    // rio.cpp: issuing
    int issue(int rank, int target, uint32_t command, const void *data, size_t len, void *reply,
              size_t reply_capacity, msg_cq_t *cq, void *cookie, const remoteio::RequestHeader &io,
              bool is_write);
    void drop_pending(remoteio::Outgoing *out);
    void fail_part(remoteio::Outgoing *out, int status);
    void complete_outgoing(remoteio::Outgoing *out);

    // shadow.cpp: the shadow thread and serving
    void shadow_thread();
    void handle(const msg_completion_t &c);
    void drain_file_io();
    void on_request_header(remoteio::RequestSlot *slot, const msg_completion_t &c);
    void post_request_slot(remoteio::RequestSlot *slot);
    void dispatch(rio_incoming *in);
    void serve_io(rio_incoming *in);
    void serve_stat(rio_incoming *in);
    void start_waiting_io();
    void submit_io(rio_incoming *in);
    void on_io_done(rio_incoming *in);
    void on_reply_header(remoteio::Outgoing *out, const msg_completion_t &c);
    // copy: the data must be copied (the caller's); else it stays valid until
    // the request is released (its read buffer, or its export's mapping).
    // may_fall_back: if the data cannot be sent, send nothing and return the
    // error (the caller answers another way); else the requester gets an error.
    int send_reply(rio_incoming *in, int status, const void *data, size_t len, bool copy = true,
                   bool may_fall_back = false);
    void release_incoming(rio_incoming *in);
    void fail_all_outgoing(int status);
    // Counts `bytes` of request data against the requester's peer_memory;
    // false (nothing counted) if they do not fit.
    bool hold_request_data(rio_incoming *in, uint64_t bytes);
    // Drains a request's separate data into nothing (a refused request's
    // sender is not left waiting).
    void drain_request_data(rio_incoming *in);

    // rio.cpp: finalize
    // Tells every rank this one has its replies and waits, at most
    // timeout_ms, to hear the same from every live rank.
    int finalize_handshake(int timeout_ms);

    msg_context_t *msg = nullptr;
    msg_cq_t *worker_cq = nullptr;
    msg_cq_t *shadow_cq = nullptr;
    // Parts that need no thread of their own (our requests' sends and reply
    // receives, our replies' sends) finish in libmsg's callback on this CQ.
    msg_cq_t *part_cq = nullptr;
    rio_options_t opts{};
    int rank = 0, size = 0;
    size_t inline_max = 0;

    std::thread shadow;
    std::unique_ptr<remoteio::FileIo> file_io;
    std::atomic<bool> closing{false};  // finalize started: no new requests of ours
    std::atomic<bool> finalized{false};
    std::atomic<bool> stopping{false};  // the shadow thread was asked to wind down
    int stop_status = 0;
    // Winding down gives up on requests still in hand at this time (set before the stop).
    std::chrono::steady_clock::time_point stop_deadline;

    // Requests of ours: shadow thread and issuers.
    std::mutex out_mu;
    std::condition_variable out_cv;
    std::unordered_map<uint64_t, std::unique_ptr<remoteio::Outgoing>> outgoing;
    uint64_t next_id = 1;
    std::atomic<uint64_t> next_tag_block{0};

    // Requests we serve. `serving` owns them; the shadow thread waits for the
    // ones still in its hands before it stops.
    std::mutex in_mu;
    std::unordered_map<rio_incoming *, std::unique_ptr<rio_incoming>> serving;
    std::atomic<int> in_shadow_hands{0};
    // Request data held for each requesting rank (under in_mu), and in all.
    std::vector<size_t> peer_held;
    std::atomic<uint64_t> request_data_held{0};

    // The shadow thread's posted request receives.
    std::vector<std::unique_ptr<remoteio::RequestSlot>> slots;
    int slots_live = 0;

    // Server-side file I/O: shadow thread only.
    std::deque<rio_incoming *> io_waiting;
    int io_in_flight = 0;
    size_t io_bytes_in_flight = 0;

    // Exports and handlers.
    std::mutex exp_mu;
    // Keyed by handles drawn at random, so that one handle tells nothing of another.
    std::map<uint64_t, std::shared_ptr<remoteio::Export>> exports;
    std::mutex handler_mu;
    std::unordered_map<uint32_t, std::pair<rio_handler_fn, void *>> handlers;

    // Reads are sent from the exports' page-cache mappings until the
    // transport fails one (verbs cannot register a read-only file mapping);
    // then file I/O serves them all. Shadow thread only.
    bool mapped_sends = true;

    // Statistics.
    std::atomic<uint64_t> requests_issued{0}, replies_received{0}, requests_served{0},
        requests_forwarded{0}, requests_refused{0}, bad_requests{0}, bytes_read{0},
        bytes_written{0};
};
