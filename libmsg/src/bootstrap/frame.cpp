// The bootstrap wire: length-prefixed frames and socket helpers.
#include "bootstrap/frame.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace msg::boot {

void put_u32(std::vector<uint8_t> &b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

bool get_u32(const std::vector<uint8_t> &b, size_t &pos, uint32_t &v) {
    if (pos + 4 > b.size()) return false;
    v = 0;
    for (int i = 0; i < 4; ++i)
        v |= static_cast<uint32_t>(b[pos + static_cast<size_t>(i)]) << (8 * i);
    pos += 4;
    return true;
}

bool write_frame(int fd, FrameType type, const std::vector<uint8_t> &body) {
    std::vector<uint8_t> out;
    out.reserve(body.size() + 5);
    put_u32(out, static_cast<uint32_t>(body.size() + 1));
    out.push_back(static_cast<uint8_t>(type));
    out.insert(out.end(), body.begin(), body.end());
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

bool FrameReader::fill(int fd) {
    if (bad_) return false;
    uint8_t chunk[65536];
    ssize_t n;
    do {
        n = ::recv(fd, chunk, sizeof chunk, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    buf_.insert(buf_.end(), chunk, chunk + n);
    return true;
}

bool FrameReader::next(Frame &out) {
    size_t pos = 0;
    uint32_t len = 0;
    if (!get_u32(buf_, pos, len)) return false;
    if (len == 0 || len > limit_ || len > kMaxFrame) {
        bad_ = true;
        return false;
    }
    if (buf_.size() < 4 + static_cast<size_t>(len)) return false;
    out.type = static_cast<FrameType>(buf_[4]);
    out.body.assign(buf_.begin() + 5, buf_.begin() + 4 + len);
    buf_.erase(buf_.begin(), buf_.begin() + 4 + len);
    return true;
}

bool parse_host_port(const std::string &s, std::string &host, std::string &port) {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    for (char c : port)
        if (c < '0' || c > '9') return false;
    return true;
}

void set_socket_liveness(int fd, int timeout_ms) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    int idle = timeout_ms / 3000 > 0 ? timeout_ms / 3000 : 1;
    int count = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    unsigned user_timeout = static_cast<unsigned>(timeout_ms);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

void set_send_timeout(int fd, int timeout_ms) {
    timeval tv{};
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int connect_with_retry(const std::string &host, const std::string &port, int timeout_ms,
                       std::string *error) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::chrono::milliseconds backoff(2);
    for (;;) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo *res = nullptr;
        int gai = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
        if (gai != 0) {
            *error = "cannot resolve coordinator " + host + ":" + port + ": " + gai_strerror(gai);
            return -1;
        }
        int last_errno = 0;
        for (addrinfo *a = res; a != nullptr; a = a->ai_next) {
            int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0) continue;
            if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            last_errno = errno;
            ::close(fd);
        }
        freeaddrinfo(res);
        if (std::chrono::steady_clock::now() >= deadline) {
            *error = "cannot connect to coordinator " + host + ":" + port + ": " +
                     std::strerror(last_errno);
            return -1;
        }
        std::this_thread::sleep_for(backoff);
        if (backoff < std::chrono::milliseconds(100)) backoff *= 2;
    }
}

int listen_on(const std::string &host, const std::string &port, int *bound_port,
              std::string *error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo *res = nullptr;
    int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
    if (gai != 0) {
        *error = "cannot resolve listen address " + host + ":" + port + ": " + gai_strerror(gai);
        return -1;
    }
    int fd = -1;
    for (addrinfo *a = res; a != nullptr; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) break;
        *error = "cannot listen on " + host + ":" + port + ": " + std::strerror(errno);
        ::close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return -1;
    sockaddr_storage ss{};
    socklen_t sl = sizeof ss;
    getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &sl);
    if (ss.ss_family == AF_INET)
        *bound_port = ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port);
    else
        *bound_port = ntohs(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port);
    return fd;
}

}  // namespace msg::boot
