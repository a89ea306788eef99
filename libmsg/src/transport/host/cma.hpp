// Single-copy reads and writes to another process on this host (cross-memory
// attach, process_vm_readv / process_vm_writev). libfabric's shm provider
// does the same copy, but inside a spin lock of the peer's shared region;
// with more ranks than cores the holder is often preempted mid-copy and every
// other rank spins. Copying here, outside any lock, leaves the provider only
// the small packets. The shm transport moves its RDMA reads and writes the
// same way.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace msg {

class CrossMemory {
  public:
    CrossMemory();
    // What a peer needs to read from us: pid, and a probe word it reads once
    // to learn whether the kernel lets it (ptrace rules, containers).
    std::vector<uint8_t> blob() const;
    static constexpr size_t kBlobSize = 24;
    // Probes every peer's blob; a peer that cannot be read is left to the
    // provider. The kernel applies one permission check (ptrace attach) to
    // reading and writing, so a peer we may read we may also write.
    // blobs[r] is empty or kBlobSize bytes.
    void connect(const std::vector<std::vector<uint8_t>> &blobs, int self);
    bool usable(int peer) const {
        return peer >= 0 && static_cast<size_t>(peer) < peers_.size() && peers_[peer].ok;
    }
    // Copies len bytes at the peer's address remote into local. Returns 0 or
    // a positive errno (ESRCH: the peer is gone).
    int read(int peer, void *local, size_t len, uint64_t remote) const;
    // Copies len bytes from local to the peer's address remote. Same returns.
    int write(int peer, const void *local, size_t len, uint64_t remote) const;

  private:
    int read_words(size_t r, uint64_t *out, uint64_t remote) const;
    int copy(int peer, void *local, size_t len, uint64_t remote, bool to_peer) const;

    struct Peer {
        pid_t pid = 0;
        bool ok = false;
    };
    uint64_t probe_;
    std::vector<Peer> peers_;
};

}  // namespace msg
