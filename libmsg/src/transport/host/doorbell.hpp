// A wake-up line between processes on one host, for providers that give no
// fd to sleep on (libfabric's shm). Each endpoint owns a datagram socket and
// a shared "sleeping" flag; a peer that posts work for it rings the socket
// only while the flag is up, so a busy receiver costs the sender one load.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace msg {

class Doorbell {
  public:
    Doorbell() = default;
    ~Doorbell();
    Doorbell(const Doorbell &) = delete;
    Doorbell &operator=(const Doorbell &) = delete;

    // Creates this endpoint's socket and flag. False (with *error) if the
    // host does not allow it; the caller then falls back to polling.
    bool open(std::string *error);
    // The name peers need, to be carried with the fabric address.
    std::vector<uint8_t> name() const;
    // Learns every rank's name (an empty name: that rank has no doorbell).
    // A name that is not one open() could have made (it arrives from the
    // peer) is refused: -EINVAL, with *error naming the rank and the fault.
    int connect(const std::vector<std::vector<uint8_t>> &names, int self, std::string *error);
    // Null if `name` is one open() could have made, else why not.
    static const char *check_name(const std::vector<uint8_t> &name);
    // Longest name accepted: the 24 hex digits open() makes, with room to spare,
    // and far below what the socket address and the shared-memory name can hold.
    static constexpr size_t kMaxName = 64;
    // Peers have all connected: the shared flag's name can go.
    void unlink_name();

    int fd() const { return fd_; }
    // Raise the flag before the final check for work, then block on fd().
    void prepare_sleep() { flag_->store(1, std::memory_order_seq_cst); }
    // Lower the flag and drain the socket after waking.
    void woke();
    // After posting work for `peer`: ring it if it sleeps.
    void ring(int peer);

  private:
    struct Peer {
        const std::atomic<uint32_t> *flag = nullptr;
        void *map = nullptr;
        sockaddr_un addr{};
        socklen_t addr_len = 0;
    };
    std::string id_;
    int fd_ = -1;
    void *map_ = nullptr;
    std::atomic<uint32_t> *flag_ = nullptr;
    bool named_ = false;
    std::atomic<uint32_t> barrier_{0};
    std::vector<Peer> peers_;
};

}  // namespace msg
