// The job coordinator's serving loop: one poll() over the listening socket,
// every rank's connection and a wake-up eventfd.
#include "bootstrap/coordinator.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include "bootstrap/frame.hpp"
#include "common/log.hpp"

namespace msg::boot {

namespace {

struct Conn {
    int fd = -1;
    int rank = -1;  // -1 until Hello
    FrameReader reader;
};

// One collective in progress (allgather or barrier), keyed by sequence number.
struct Collective {
    std::vector<bool> arrived;
    std::vector<std::vector<uint8_t>> data;
};

}  // namespace

struct Coordinator::State {
    int size;
    std::vector<Conn> conns;
    std::vector<int> rank_conn;  // rank -> index in conns, -1 if none
    std::vector<bool> failed, left;
    int joined = 0;
    std::map<uint32_t, Collective> gathers, barriers;

    bool active(int r) const {
        return !failed[static_cast<size_t>(r)] && !left[static_cast<size_t>(r)];
    }
    bool all_done() const {
        for (int r = 0; r < size; ++r)
            if (active(r)) return false;
        return true;
    }
    void send_to(int r, FrameType t, const std::vector<uint8_t> &body) {
        int ci = rank_conn[static_cast<size_t>(r)];
        if (ci >= 0 && active(r)) write_frame(conns[static_cast<size_t>(ci)].fd, t, body);
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
            std::vector<uint8_t> body;
            put_u32(body, it->first);
            put_u32(body, static_cast<uint32_t>(size));
            for (int r = 0; r < size; ++r) {
                bool present = it->second.arrived[static_cast<size_t>(r)];
                body.push_back(present ? 1 : 0);
                const auto &d = it->second.data[static_cast<size_t>(r)];
                put_u32(body, static_cast<uint32_t>(d.size()));
                body.insert(body.end(), d.begin(), d.end());
            }
            broadcast(FrameType::GatherResult, body);
            it = gathers.erase(it);
        }
        for (auto it = barriers.begin(); it != barriers.end();) {
            if (!complete(it->second)) {
                ++it;
                continue;
            }
            std::vector<uint8_t> body;
            put_u32(body, it->first);
            broadcast(FrameType::BarrierDone, body);
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
        std::vector<uint8_t> body;
        put_u32(body, static_cast<uint32_t>(r));
        broadcast(FrameType::Failed, body);
        settle();
    }
};

std::unique_ptr<Coordinator> Coordinator::listen(const std::string &host, const std::string &port,
                                                 int size, int join_timeout_ms,
                                                 std::string *error) {
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

void Coordinator::serve() {
    State s;
    s.size = size_;
    s.rank_conn.assign(static_cast<size_t>(size_), -1);
    s.failed.assign(static_cast<size_t>(size_), false);
    s.left.assign(static_cast<size_t>(size_), false);
    auto join_deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(join_timeout_ms_);

    auto drop = [&](size_t ci) {
        Conn &c = s.conns[ci];
        if (c.fd >= 0) ::close(c.fd);
        c.fd = -1;
        if (c.rank >= 0) {
            s.rank_conn[static_cast<size_t>(c.rank)] = -1;
            s.fail(c.rank);  // no-op if it left in order
        }
    };
    auto job_error = [&](const std::string &text) {
        log_error("coordinator: %s", text.c_str());
        std::vector<uint8_t> body(text.begin(), text.end());
        for (auto &c : s.conns)
            if (c.fd >= 0) write_frame(c.fd, FrameType::Error, body);
        for (int r = 0; r < s.size; ++r) s.failed[static_cast<size_t>(r)] = true;
    };

    while (!stop_) {
        {
            std::vector<int> reported;
            {
                std::lock_guard<std::mutex> lk(mu_);
                reported.swap(reported_failures_);
            }
            for (int r : reported)
                if (r >= 0 && r < s.size) {
                    // A rank that died before joining can never join: the job is lost.
                    if (s.rank_conn[static_cast<size_t>(r)] < 0 && s.joined < s.size &&
                        !s.left[static_cast<size_t>(r)])
                        job_error("rank " + std::to_string(r) + " exited before joining the job");
                    s.fail(r);
                }
        }
        if (s.joined == s.size && s.all_done()) break;
        if (s.joined < s.size && std::chrono::steady_clock::now() > join_deadline) {
            job_error("only " + std::to_string(s.joined) + " of " + std::to_string(s.size) +
                      " ranks joined within " + std::to_string(join_timeout_ms_) + " ms");
            break;
        }
        if (s.all_done() && s.joined == s.size) break;

        std::vector<pollfd> fds;
        fds.push_back({listen_fd_, POLLIN, 0});
        fds.push_back({wake_fd_, POLLIN, 0});
        std::vector<size_t> which;
        for (size_t i = 0; i < s.conns.size(); ++i)
            if (s.conns[i].fd >= 0) {
                fds.push_back({s.conns[i].fd, POLLIN, 0});
                which.push_back(i);
            }
        int rc = ::poll(fds.data(), fds.size(), 200);
        if (rc < 0) continue;
        if (fds[1].revents & POLLIN) {
            uint64_t v;
            [[maybe_unused]] ssize_t n = ::read(wake_fd_, &v, sizeof v);
        }
        if (fds[0].revents & POLLIN) {
            int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0) {
                set_socket_liveness(fd, join_timeout_ms_);
                Conn c;
                c.fd = fd;
                s.conns.push_back(std::move(c));
            }
        }
        for (size_t k = 0; k < which.size(); ++k) {
            if (!(fds[k + 2].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            size_t ci = which[k];
            if (!s.conns[ci].reader.fill(s.conns[ci].fd)) {
                drop(ci);
                continue;
            }
            Frame f;
            while (s.conns[ci].fd >= 0 && s.conns[ci].reader.next(f)) {
                Conn &c = s.conns[ci];
                size_t pos = 0;
                uint32_t a = 0, b = 0;
                if (f.type == FrameType::Hello) {
                    if (!get_u32(f.body, pos, a) || !get_u32(f.body, pos, b)) {
                        drop(ci);
                        break;
                    }
                    int r = static_cast<int>(a);
                    std::string why;
                    if (static_cast<int>(b) != s.size)
                        why = "rank " + std::to_string(r) + " expects a job of " +
                              std::to_string(b) + " ranks, the coordinator serves " +
                              std::to_string(s.size);
                    else if (r < 0 || r >= s.size)
                        why = "rank " + std::to_string(r) + " is outside the job";
                    else if (s.rank_conn[static_cast<size_t>(r)] >= 0 ||
                             s.failed[static_cast<size_t>(r)] || s.left[static_cast<size_t>(r)])
                        why = "rank " + std::to_string(r) + " joined twice";
                    if (!why.empty()) {
                        std::vector<uint8_t> body(why.begin(), why.end());
                        write_frame(c.fd, FrameType::Error, body);
                        log_error("coordinator: %s", why.c_str());
                        ::close(c.fd);
                        c.fd = -1;
                        break;
                    }
                    c.rank = r;
                    s.rank_conn[static_cast<size_t>(r)] = static_cast<int>(ci);
                    ++s.joined;
                    s.settle();
                } else if (c.rank < 0) {
                    drop(ci);  // speaking before Hello
                    break;
                } else if (f.type == FrameType::Gather) {
                    if (!get_u32(f.body, pos, a)) {
                        drop(ci);
                        break;
                    }
                    Collective &g = s.collective(s.gathers, a);
                    g.arrived[static_cast<size_t>(c.rank)] = true;
                    g.data[static_cast<size_t>(c.rank)].assign(f.body.begin() + 4, f.body.end());
                    s.settle();
                } else if (f.type == FrameType::Barrier) {
                    if (!get_u32(f.body, pos, a)) {
                        drop(ci);
                        break;
                    }
                    s.collective(s.barriers, a).arrived[static_cast<size_t>(c.rank)] = true;
                    s.settle();
                } else if (f.type == FrameType::Bye) {
                    s.left[static_cast<size_t>(c.rank)] = true;
                    s.rank_conn[static_cast<size_t>(c.rank)] = -1;
                    ::close(c.fd);
                    c.fd = -1;
                    s.settle();
                    break;
                } else {
                    drop(ci);
                    break;
                }
            }
        }
    }
    bool clean = true;
    for (int r = 0; r < s.size; ++r)
        if (!s.left[static_cast<size_t>(r)]) clean = false;
    for (auto &c : s.conns)
        if (c.fd >= 0) ::close(c.fd);
    clean_ = clean;
    finished_ = true;
}

}  // namespace msg::boot
