// The bootstrap wire: length-prefixed frames over TCP between ranks and the
// coordinator, plus the socket helpers both sides share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msg::boot {

enum class FrameType : uint8_t {
    Hello = 1,           // rank -> coordinator: u32 rank, u32 size, nonce, mac (job_key.hpp)
    Gather = 2,          // rank -> coordinator: u32 seq, bytes
    GatherResult = 3,    // coordinator -> rank: u32 seq, u32 n, n x (u8 present, u32 len, bytes)
    Barrier = 4,         // rank -> coordinator: u32 seq
    BarrierDone = 5,     // coordinator -> rank: u32 seq
    Bye = 6,             // rank -> coordinator: leaving in order
    Failed = 7,          // coordinator -> rank: u32 rank that failed
    Error = 8,           // coordinator -> rank: text; the job cannot go on
    Challenge = 9,       // coordinator -> rank, first on every connection: nonce
    Welcome = 10,        // coordinator -> rank, after a good Hello: mac proving the key
    Heartbeat = 11,      // both ways: u32 ms the sender may stay silent (it sends every quarter)
    BarrierFailed = 12,  // coordinator -> rank: u32 seq, u32 rank that failed before reaching it
};

constexpr uint32_t kMaxFrame = 64u << 20;
// Before a peer has proven it belongs to the job, a frame is at most this long.
constexpr uint32_t kMaxFrameBeforeHello = 4096;
// The most ranks a job may have (VIADUCT_SIZE's bound).
constexpr uint32_t kMaxJobSize = 1u << 20;

struct Frame {
    FrameType type;
    std::vector<uint8_t> body;
};

// Little helpers to build and parse bodies.
void put_u32(std::vector<uint8_t> &b, uint32_t v);
bool get_u32(const std::vector<uint8_t> &b, size_t &pos, uint32_t &v);

// Blocking write of one frame; false on error.
bool write_frame(int fd, FrameType type, const std::vector<uint8_t> &body);

// Accumulates bytes from a socket and cuts them into frames.
class FrameReader {
  public:
    // Reads what is available (fd may be blocking: reads once). Returns false
    // on EOF or error, or on a frame that breaks the size limit.
    bool fill(int fd);
    // Pops one complete frame if there is one.
    bool next(Frame &out);
    // The largest frame accepted from now on (kMaxFrame unless set): a peer
    // not yet authenticated gets only a few KiB.
    void set_limit(uint32_t max_len) { limit_ = max_len; }
    // True once a frame broke the limit: the connection must be dropped.
    bool bad() const { return bad_; }

  private:
    std::vector<uint8_t> buf_;
    uint32_t limit_ = kMaxFrame;
    bool bad_ = false;
};

// Parses "host:port". False on a malformed string.
bool parse_host_port(const std::string &s, std::string &host, std::string &port);
// Keepalive and user timeout so a vanished host is noticed in bounded time.
void set_socket_liveness(int fd, int timeout_ms);
// Sends on fd give up after timeout_ms without progress, so a peer that stopped
// reading cannot block the writer for ever.
void set_send_timeout(int fd, int timeout_ms);
// Connects to host:port, retrying until timeout_ms has passed. -1 on failure.
int connect_with_retry(const std::string &host, const std::string &port, int timeout_ms,
                       std::string *error);
// Listens on host:port (port 0: any). Returns the fd, fills *bound_port.
int listen_on(const std::string &host, const std::string &port, int *bound_port,
              std::string *error);

}  // namespace msg::boot
