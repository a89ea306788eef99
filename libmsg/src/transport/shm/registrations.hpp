// This rank's registrations as its region publishes them: a peer may read or
// write by cross-memory copy only inside one, in the directions it allows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/shm/region.hpp"

namespace msg {

class ShmRegistrationTable {
  public:
    explicit ShmRegistrationTable(std::shared_ptr<ShmRegion> region);
    // Publishes [addr, addr + len) with `access` (Access bits); its key, or 0
    // when the table is full.
    uint64_t add(const void *addr, size_t len, unsigned access);
    void remove(uint64_t key);

  private:
    std::mutex mu_;  // this process's threads only; nothing in shared memory is locked
    std::shared_ptr<ShmRegion> region_;
    std::vector<size_t> free_;
    uint64_t generation_ = 0;
};

// The key's slot in a region's table.
inline size_t shm_registration_slot(uint64_t key) {
    return static_cast<size_t>(key % kShmRegistrations);
}

// True if the owner of `region` has published `key` covering
// [remote, remote + len) for `access`. Read from the owner's shared memory;
// only the owner writes its table.
bool shm_registration_covers(const ShmRegion &region, uint64_t key, uint64_t remote, size_t len,
                             unsigned access);

}  // namespace msg
