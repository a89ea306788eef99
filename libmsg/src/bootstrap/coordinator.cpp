// The job coordinator's serving loop: one poll() over the listening socket,
// every rank's connection and a wake-up eventfd.
#include "bootstrap/coordinator.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"
#include "bootstrap/messages.hpp"
#include "common/config.hpp"
#include "common/log.hpp"

namespace msg::boot {

// The coordinator's own types (named, not anonymous: Coordinator::State holds them).
namespace coordinator_detail {

struct Conn {
    int fd = -1;
    int rank = -1;  // -1 until Hello
    FrameReader reader;
    std::string peer;  // address:port, for messages
    Nonce challenge{};
    std::chrono::steady_clock::time_point hello_deadline;
    // Once the rank has sent a Heartbeat: how long it may stay silent (the
    // larger of its promise and ours), and when it was last heard. 0: a peer
    // that does not send heartbeats, left to TCP's own liveness checks.
    int silence_ms = 0;
    std::chrono::steady_clock::time_point last_heard;
};

// "address:port" of a socket's peer.
std::string peer_name(const sockaddr_storage &ss) {
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    bool v6 = ss.ss_family == AF_INET6;
    if (ss.ss_family == AF_INET) {
        const auto *a = reinterpret_cast<const sockaddr_in *>(&ss);
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (v6) {
        const auto *a = reinterpret_cast<const sockaddr_in6 *>(&ss);
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    }
    char out[INET6_ADDRSTRLEN + 16];
    std::snprintf(out, sizeof out, v6 ? "[%s]:%d" : "%s:%d", host, port);
    return out;
}

// One collective in progress (allgather or barrier), keyed by sequence number.
struct Collective {
    std::vector<bool> arrived;
    std::vector<std::vector<uint8_t>> data;
    // A rank that failed while this barrier waited for it, else -1: the
    // barrier then completes without it, and every rank is told.
    int lost = -1;
};

}  // namespace coordinator_detail

using namespace coordinator_detail;

struct Coordinator::State {
    int size;
    const JobKey *key;
    int heartbeat_ms = 0;  // our allowed silence; we send every quarter of it
    std::vector<Conn> conns;
    std::vector<int> rank_fd;  // rank -> its connection's fd, -1 if none
    std::vector<bool> failed, left;
    std::vector<bool> was_joined;  // rank -> it joined the job at some point
    // Each rank's next allgather and barrier: a rank runs its collectives one
    // at a time and in order, so any other sequence number is a broken peer.
    std::vector<uint32_t> next_gather, next_barrier;
    int joined = 0;
    std::map<uint32_t, Collective> gathers, barriers;

    void job_error(const std::string &text);
    void prune(int hello_timeout_ms);
    void judge_silence(std::chrono::steady_clock::time_point now);
    void send_heartbeats();

    bool active(int r) const {
        return !failed[static_cast<size_t>(r)] && !left[static_cast<size_t>(r)];
    }
    bool all_done() const {
        for (int r = 0; r < size; ++r)
            if (active(r)) return false;
        return true;
    }
    void send_to(int r, FrameType t, const std::vector<uint8_t> &body) {
        int fd = rank_fd[static_cast<size_t>(r)];
        // A rank that stopped reading makes the send time out (heartbeat
        // ranks' sockets have a send timeout): its connection is shut, and the
        // next poll drops it and fails the rank.
        if (fd >= 0 && active(r) && !write_frame(fd, t, body)) {
            log_error("coordinator: cannot send to rank %d: %s; dropping it", r,
                      errno == EAGAIN || errno == EWOULDBLOCK ? "it stopped reading"
                                                              : std::strerror(errno));
            ::shutdown(fd, SHUT_RDWR);
        }
    }
    void broadcast(FrameType t, const std::vector<uint8_t> &body) {
        for (int r = 0; r < size; ++r) send_to(r, t, body);
    }

    // Finishes every collective that all active ranks have reached. Nothing
    // completes before the whole job has joined.
    void settle() {
        if (joined < size) return;
        for (auto it = gathers.begin(); it != gathers.end();) {
            if (!complete(it->second)) {
                ++it;
                continue;
            }
            GatherResult g;
            g.seq = it->first;
            g.present = it->second.arrived;
            g.data = std::move(it->second.data);
            broadcast(FrameType::GatherResult, encode_gather_result(g));
            it = gathers.erase(it);
        }
        for (auto it = barriers.begin(); it != barriers.end();) {
            if (!complete(it->second)) {
                ++it;
                continue;
            }
            if (it->second.lost >= 0)
                broadcast(FrameType::BarrierFailed,
                          encode_barrier_failed(it->first, it->second.lost));
            else
                broadcast(FrameType::BarrierDone, encode_seq(it->first));
            it = barriers.erase(it);
        }
    }
    bool complete(const Collective &c) const {
        for (int r = 0; r < size; ++r)
            if (active(r) && !c.arrived[static_cast<size_t>(r)]) return false;
        return true;
    }
    Collective &collective(std::map<uint32_t, Collective> &m, uint32_t seq) {
        auto &c = m[seq];
        if (c.arrived.empty()) {
            c.arrived.assign(static_cast<size_t>(size), false);
            c.data.resize(static_cast<size_t>(size));
        }
        return c;
    }
    void fail(int r) {
        if (!active(r)) return;
        failed[static_cast<size_t>(r)] = true;
        log_debug("coordinator: rank %d failed", r);
        for (auto &[seq, b] : barriers)
            if (!b.arrived[static_cast<size_t>(r)] && b.lost < 0) b.lost = r;
        broadcast(FrameType::Failed, encode_failed(r));
        settle();
    }

    bool evict_oldest_pending();
    // Closes a connection; a rank on it that has not left has failed.
    void drop(Conn &c) {
        if (c.fd >= 0) ::close(c.fd);
        c.fd = -1;
        if (c.rank >= 0) {
            rank_fd[static_cast<size_t>(c.rank)] = -1;
            fail(c.rank);  // no-op if it left in order
        }
    }
    // A peer that breaks the protocol is dropped, and says why in the log.
    bool broken(Conn &c, const char *why) {
        if (c.rank >= 0)
            log_error("coordinator: rank %d: %s; dropping it", c.rank, why);
        else
            log_debug("coordinator: dropped a connection from %s before Hello: %s", c.peer.c_str(),
                      why);
        drop(c);
        return false;
    }
    // Refuses a Hello: tells the peer why and closes its connection.
    bool refuse(Conn &c, const std::string &why) {
        write_frame(c.fd, FrameType::Error, encode_error(why));
        log_error("coordinator: %s", why.c_str());
        ::close(c.fd);
        c.fd = -1;
        return false;
    }

    // Admits a rank only if its Hello answers this connection's challenge
    // under the job key; nothing about the job is taken or told before that.
    bool hello(Conn &c, const Frame &f) {
        Hello h;
        if (const char *why = decode_hello(f.body, &h)) return broken(c, why);
        int r = static_cast<int>(h.rank);
        if (!mac_equal(h.mac, hello_mac(*key, c.challenge, h.nonce, h.rank, h.size))) {
            log_error(
                "coordinator: refused a connection from %s: wrong job key (it claimed rank "
                "%u of %u)",
                c.peer.c_str(), h.rank, h.size);
            write_frame(c.fd, FrameType::Error, encode_error("wrong job key"));
            ::close(c.fd);
            c.fd = -1;
            return false;
        }
        if (h.size != static_cast<uint32_t>(size))
            return refuse(c, "rank " + std::to_string(r) + " expects a job of " +
                                 std::to_string(h.size) + " ranks, the coordinator serves " +
                                 std::to_string(size));
        if (rank_fd[h.rank] >= 0 || failed[h.rank] || left[h.rank])
            return refuse(c, "rank " + std::to_string(r) + " joined twice");
        if (!write_frame(c.fd, FrameType::Welcome,
                         encode_welcome(welcome_mac(*key, c.challenge, h.nonce, h.rank, h.size))))
            return broken(c, "cannot send Welcome");
        c.rank = r;
        c.last_heard = std::chrono::steady_clock::now();
        c.reader.set_limit(kMaxFrame);
        rank_fd[h.rank] = c.fd;
        was_joined[h.rank] = true;
        ++joined;
        settle();
        return true;
    }

    // Acts on one frame; false when the connection was closed.
    bool handle(Conn &c, const Frame &f) {
        if (f.type == FrameType::Hello) {
            if (c.rank >= 0) return broken(c, "a second Hello");
            return hello(c, f);
        }
        if (c.rank < 0) return broken(c, "speaking before Hello");
        const auto r = static_cast<size_t>(c.rank);
        uint32_t seq = 0;
        switch (f.type) {
            case FrameType::Gather: {
                std::vector<uint8_t> data;
                if (const char *why = decode_gather(f.body, &seq, &data)) return broken(c, why);
                if (seq != next_gather[r]) return broken(c, "an allgather out of sequence");
                ++next_gather[r];
                Collective &g = collective(gathers, seq);
                g.arrived[r] = true;
                g.data[r] = std::move(data);
                settle();
                return true;
            }
            case FrameType::Barrier:
                if (const char *why = decode_seq(f.body, &seq)) return broken(c, why);
                if (seq != next_barrier[r]) return broken(c, "a barrier out of sequence");
                ++next_barrier[r];
                log_debug("coordinator: rank %d reached barrier %u", c.rank, seq);
                collective(barriers, seq).arrived[r] = true;
                settle();
                return true;
            case FrameType::Heartbeat: {
                int theirs = 0;
                if (const char *why = decode_heartbeat(f.body, &theirs)) return broken(c, why);
                if (c.silence_ms == 0) {
                    // The first: from now on this rank is watched, and a send
                    // it does not read cannot hold up the whole job.
                    set_send_timeout(c.fd, std::max(heartbeat_ms / 4, 100));
                    if (!write_frame(c.fd, FrameType::Heartbeat, encode_heartbeat(heartbeat_ms)))
                        return broken(c, "cannot answer its Heartbeat");
                }
                c.silence_ms = std::max(heartbeat_ms, theirs);
                return true;
            }
            case FrameType::Bye:
                if (!f.body.empty()) return broken(c, "Bye with a body");
                left[r] = true;
                rank_fd[r] = -1;
                ::close(c.fd);
                c.fd = -1;
                settle();
                return false;
            default:
                return broken(c, "a frame type a rank does not send");
        }
    }
};

std::unique_ptr<Coordinator> Coordinator::listen(const std::string &host, const std::string &port,
                                                 int size, int join_timeout_ms, const JobKey &key,
                                                 std::string *error,
                                                 const CoordinatorLimits &limits) {
    if (size < 1) {
        *error = "job size must be at least 1";
        return nullptr;
    }
    std::unique_ptr<Coordinator> c(new Coordinator());
    c->listen_fd_ = listen_on(host, port, &c->port_, error);
    if (c->listen_fd_ < 0) return nullptr;
    c->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    c->size_ = size;
    c->join_timeout_ms_ = join_timeout_ms;
    c->limits_ = limits;
    c->key_ = key;
    return c;
}

Coordinator::~Coordinator() {
    stop();
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Coordinator::start() {
    thread_ = std::thread([this] { serve(); });
}

bool Coordinator::join() {
    if (thread_.joinable()) thread_.join();
    return clean_;
}

void Coordinator::report_failure(int rank) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        reported_failures_.push_back(rank);
    }
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void Coordinator::stop() {
    stop_ = true;
    uint64_t one = 1;
    if (wake_fd_ >= 0) [[maybe_unused]]
        ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

// Closes the oldest connection that has not joined; false if there is none.
bool Coordinator::State::evict_oldest_pending() {
    for (Conn &c : conns)
        if (c.fd >= 0 && c.rank < 0) {
            log_debug("coordinator: closed a connection from %s: too many not yet joined",
                      c.peer.c_str());
            drop(c);
            return true;
        }
    return false;
}

void Coordinator::accept_one(State &s, std::chrono::steady_clock::time_point &paused_until) {
    sockaddr_storage ss{};
    socklen_t sl = sizeof ss;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr *>(&ss), &sl, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            // Out of descriptors or memory: give up a stranger's connection to
            // make room, or, with none to give, stop listening for a moment.
            if (!s.evict_oldest_pending()) {
                log_error("coordinator: cannot accept a connection: %s", std::strerror(errno));
                paused_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
            }
        }
        return;
    }
    int pending = 0;
    for (const Conn &c : s.conns)
        if (c.fd >= 0 && c.rank < 0) ++pending;
    if (pending >= limits_.max_pending) s.evict_oldest_pending();
    set_socket_liveness(fd, join_timeout_ms_);
    Conn c;
    c.fd = fd;
    c.peer = peer_name(ss);
    c.hello_deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.hello_timeout_ms);
    c.reader.set_limit(kMaxFrameBeforeHello);
    c.challenge = make_nonce();
    // The challenge is tiny and the socket new: this write does not block.
    if (!write_frame(fd, FrameType::Challenge, encode_challenge(c.challenge))) {
        ::close(fd);
        return;
    }
    s.conns.push_back(std::move(c));
}

// Fails the whole job: every rank is told why and counted as failed.
void Coordinator::State::job_error(const std::string &text) {
    log_error("coordinator: %s", text.c_str());
    for (auto &c : conns)
        if (c.fd >= 0) write_frame(c.fd, FrameType::Error, encode_error(text));
    for (int r = 0; r < size; ++r) failed[static_cast<size_t>(r)] = true;
}

// Closed connections go; the open ones keep their order (oldest first). A
// connection that sent no Hello in time is closed.
void Coordinator::State::prune(int hello_timeout_ms) {
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const Conn &c) { return c.fd < 0; }),
                conns.end());
    auto now = std::chrono::steady_clock::now();
    for (Conn &c : conns)
        if (c.rank < 0 && now > c.hello_deadline) {
            log_debug("coordinator: closed a connection from %s: no Hello within %d ms",
                      c.peer.c_str(), hello_timeout_ms);
            drop(c);
        }
}

// Silence is judged only after what has arrived was read: a coordinator that
// was itself not scheduled for a while finds the ranks' heartbeats waiting,
// not missing.
void Coordinator::State::judge_silence(std::chrono::steady_clock::time_point now) {
    for (Conn &c : conns) {
        if (c.fd < 0 || c.rank < 0 || c.silence_ms == 0 || !active(c.rank)) continue;
        auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.last_heard);
        if (quiet.count() > c.silence_ms) {
            log_error(
                "coordinator: rank %d (%s) sent nothing for %.1f s (stopped, or its host "
                "frozen); declaring it failed",
                c.rank, c.peer.c_str(), static_cast<double>(quiet.count()) / 1000.0);
            drop(c);
        }
    }
}

void Coordinator::State::send_heartbeats() {
    const auto beat = encode_heartbeat(heartbeat_ms);
    for (Conn &c : conns)
        if (c.fd >= 0 && c.rank >= 0 && c.silence_ms > 0)
            send_to(c.rank, FrameType::Heartbeat, beat);
}

// The ranks that the launcher reported dead since the last turn.
void Coordinator::take_reported_failures(State &s) {
    std::vector<int> reported;
    {
        std::lock_guard<std::mutex> lk(mu_);
        reported.swap(reported_failures_);
    }
    std::vector<int> deferred;
    for (int r : reported)
        if (r >= 0 && r < s.size) {
            // A rank whose process has ended may have left frames unread (its Bye): they are
            // read first, so that a rank that left in order is not taken for a failed one.
            char byte = 0;
            const int fd = s.rank_fd[static_cast<size_t>(r)];
            if (fd >= 0 && ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
                deferred.push_back(r);
                continue;
            }
            // A rank that died before joining can never join: the job is lost.
            if (s.rank_fd[static_cast<size_t>(r)] < 0 && s.joined < s.size &&
                !s.left[static_cast<size_t>(r)])
                s.job_error("rank " + std::to_string(r) + " exited before joining the job");
            s.fail(r);
        }
    if (!deferred.empty()) {
        std::lock_guard<std::mutex> lk(mu_);
        reported_failures_.insert(reported_failures_.end(), deferred.begin(), deferred.end());
    }
}

// One poll of the listening socket, the wake-up fd and every connection, then
// the frames that arrived, handled in order. False when poll failed (a
// signal): the turn ends there.
bool Coordinator::poll_once(State &s, std::chrono::steady_clock::time_point &accept_paused_until) {
    std::vector<pollfd> fds;
    // While accept4 fails for want of descriptors, the listening socket
    // stays readable: poll would return at once, again and again.
    bool listening = std::chrono::steady_clock::now() >= accept_paused_until;
    fds.push_back({listening ? listen_fd_ : -1, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const Conn &c : s.conns) fds.push_back({c.fd, POLLIN, 0});
    int rc = ::poll(fds.data(), fds.size(), 100);
    if (rc < 0) return false;
    if (fds[1].revents & POLLIN) {
        uint64_t v;
        [[maybe_unused]] ssize_t n = ::read(wake_fd_, &v, sizeof v);
    }
    // Connections accepted now are polled from the next turn on.
    const size_t polled = s.conns.size();
    if (fds[0].revents & POLLIN) accept_one(s, accept_paused_until);
    for (size_t k = 0; k < polled; ++k) {
        if (!(fds[k + 2].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Conn &c = s.conns[k];
        if (!c.reader.fill(c.fd)) {
            s.drop(c);
            continue;
        }
        c.last_heard = std::chrono::steady_clock::now();
        Frame f;
        while (c.fd >= 0 && c.reader.next(f))
            if (!s.handle(c, f)) break;
        if (c.fd >= 0 && c.reader.bad()) s.broken(c, "a frame longer than allowed");
    }
    return true;
}

void Coordinator::serve() {
    State s;
    s.size = size_;
    s.key = &key_;
    s.heartbeat_ms = limits_.heartbeat_ms > 0 ? limits_.heartbeat_ms : msg::heartbeat_ms(-1);
    const auto beat_every = std::chrono::milliseconds(std::max(s.heartbeat_ms / 4, 25));
    auto next_beat = std::chrono::steady_clock::now() + beat_every;
    s.rank_fd.assign(static_cast<size_t>(size_), -1);
    s.failed.assign(static_cast<size_t>(size_), false);
    s.left.assign(static_cast<size_t>(size_), false);
    s.was_joined.assign(static_cast<size_t>(size_), false);
    s.next_gather.assign(static_cast<size_t>(size_), 0);
    s.next_barrier.assign(static_cast<size_t>(size_), 0);
    // The ranks have join_timeout_ms from the first one's arrival (its msg_init), not from
    // the start: a program may set up for as long as it likes before it joins.
    std::optional<std::chrono::steady_clock::time_point> join_deadline;

    std::chrono::steady_clock::time_point accept_paused_until{};
    while (!stop_) {
        take_reported_failures(s);
        if (s.all_done()) break;  // every rank has left or failed (or never joined and ended)
        if (!join_deadline && s.joined > 0)
            join_deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(join_timeout_ms_);
        if (join_deadline && s.joined < s.size &&
            std::chrono::steady_clock::now() > *join_deadline) {
            s.job_error("only " + std::to_string(s.joined) + " of " + std::to_string(s.size) +
                        " ranks joined within " + std::to_string(join_timeout_ms_) +
                        " ms of the first");
            join_timed_out_ = true;
            break;
        }
        s.prune(limits_.hello_timeout_ms);
        if (!poll_once(s, accept_paused_until)) continue;
        auto now = std::chrono::steady_clock::now();
        s.judge_silence(now);
        if (now >= next_beat) {
            next_beat = now + beat_every;
            s.send_heartbeats();
        }
    }
    bool clean = true;
    for (int r = 0; r < s.size; ++r) {
        if (!s.left[static_cast<size_t>(r)]) clean = false;
        if (s.was_joined[static_cast<size_t>(r)] && !s.left[static_cast<size_t>(r)])
            left_without_finalize_.push_back(r);
        if (!s.was_joined[static_cast<size_t>(r)]) never_joined_.push_back(r);
    }
    for (auto &c : s.conns)
        if (c.fd >= 0) ::close(c.fd);
    clean_ = clean;
    finished_ = true;
}

}  // namespace msg::boot
