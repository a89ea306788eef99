// Doorbell: an abstract-namespace datagram socket plus a POSIX shared-memory
// flag page per endpoint, both named by a random id.
#include "transport/host/doorbell.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "transport/host/signal_unlink.hpp"

namespace msg {

namespace {

constexpr size_t kPage = 4096;

std::string shm_name(const std::string &id) {
    return "/viaduct-db-" + id;
}

// False if the name does not fit sun_path (after its leading NUL): it is
// refused, never cut, since a cut name could ring another process.
bool socket_address(const std::string &id, sockaddr_un *addr, socklen_t *len) {
    std::memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    // Abstract namespace: no file to clean up, gone with the socket.
    std::string name = "viaduct-db-" + id;
    if (1 + name.size() > sizeof addr->sun_path) return false;
    std::memcpy(addr->sun_path + 1, name.data(), name.size());
    *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    return true;
}

}  // namespace

Doorbell::~Doorbell() {
    for (Peer &p : peers_)
        if (p.map != nullptr) munmap(p.map, kPage);
    if (map_ != nullptr) munmap(map_, kPage);
    unlink_name();
    if (fd_ >= 0) ::close(fd_);
}

bool Doorbell::open(std::string *error) {
    std::random_device rd;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%08x%08x%08x", rd(), rd(), static_cast<unsigned>(getpid()));
    id_ = buf;

    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return *error = std::string("doorbell socket: ") + std::strerror(errno), false;
    sockaddr_un addr;
    socklen_t len;
    if (!socket_address(id_, &addr, &len)) return *error = "doorbell name too long", false;
    if (::bind(fd_, reinterpret_cast<sockaddr *>(&addr), len) != 0)
        return *error = std::string("doorbell bind: ") + std::strerror(errno), false;

    // Handed to the signal handler before the name exists: no moment would leave it.
    unlink_on_signal(shm_name(id_));
    int shm = shm_open(shm_name(id_).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (shm < 0) {
        const int err = errno;
        forget_on_signal(shm_name(id_));
        return *error = std::string("doorbell flag: ") + std::strerror(err), false;
    }
    named_ = true;
    // The page's space is taken now (a full /dev/shm is this error, not a
    // SIGBUS at the first store); posix_fallocate returns its error.
    int err = posix_fallocate(shm, 0, kPage);
    if (err == 0) {
        map_ = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
        if (map_ == MAP_FAILED) err = errno;
    }
    ::close(shm);
    if (err != 0) {
        map_ = nullptr;
        return *error = std::string("doorbell flag in /dev/shm: ") + std::strerror(err), false;
    }
    flag_ = new (map_) std::atomic<uint32_t>(0);
    return true;
}

std::vector<uint8_t> Doorbell::name() const {
    return std::vector<uint8_t>(id_.begin(), id_.end());
}

const char *Doorbell::check_name(const std::vector<uint8_t> &name) {
    if (name.size() > kMaxName) return "longer than a doorbell name can be";
    // Lower-case hex digits only: the name becomes part of a path (/dev/shm)
    // and of a socket address, where '/', '.' or a NUL would point elsewhere.
    for (uint8_t c : name)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return "a character other than a hex digit";
    return nullptr;
}

int Doorbell::connect(const std::vector<std::vector<uint8_t>> &names, int self,
                      std::string *error) {
    // Every name is checked before any is used: a refused job opens nothing.
    for (size_t r = 0; r < names.size(); ++r) {
        if (static_cast<int>(r) == self || names[r].empty()) continue;
        if (const char *why = check_name(names[r])) {
            *error = "rank " + std::to_string(r) + " sent a malformed doorbell name (" +
                     std::to_string(names[r].size()) + " bytes, " + why + ")";
            return -EINVAL;
        }
    }
    peers_.assign(names.size(), Peer{});
    for (size_t r = 0; r < names.size(); ++r) {
        if (static_cast<int>(r) == self || names[r].empty()) continue;
        std::string id(names[r].begin(), names[r].end());
        int shm = shm_open(shm_name(id).c_str(), O_RDONLY | O_CLOEXEC, 0);
        if (shm < 0) continue;  // another host or namespace: that peer is polled
        void *m = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, shm, 0);
        ::close(shm);
        if (m == MAP_FAILED) continue;
        Peer &p = peers_[r];
        p.map = m;
        if (!socket_address(id, &p.addr, &p.addr_len)) {
            // check_name keeps this from happening; an unusable address is polled, not rung.
            munmap(m, kPage);
            p.map = nullptr;
            continue;
        }
        p.flag = static_cast<const std::atomic<uint32_t> *>(m);
    }
    return 0;
}

void Doorbell::unlink_name() {
    if (!named_) return;
    shm_unlink(shm_name(id_).c_str());
    forget_on_signal(shm_name(id_));
    named_ = false;
}

void Doorbell::woke() {
    flag_->store(0, std::memory_order_relaxed);
    char sink[64];
    while (::recv(fd_, sink, sizeof sink, 0) > 0) {
    }
}

void Doorbell::ring(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (p.flag == nullptr) return;
    // Pairs with prepare_sleep: either the peer's last check sees our work,
    // or we see its flag. A locked read-modify-write is the full barrier
    // (and, unlike a fence, ThreadSanitizer accepts it).
    barrier_.fetch_add(0, std::memory_order_seq_cst);
    if (p.flag->load(std::memory_order_seq_cst) == 0) return;
    char one = 1;
    // A full socket means a wake-up is already pending: nothing is lost.
    ::sendto(fd_, &one, 1, MSG_DONTWAIT, reinterpret_cast<sockaddr *>(&p.addr), p.addr_len);
}

}  // namespace msg
