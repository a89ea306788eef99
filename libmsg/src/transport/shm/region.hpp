// One rank's region in /dev/shm for the shm transport: a header, the table
// of its memory registrations (which peers check their cross-memory reads
// and writes against) and one ring per sender. The owner creates it; each
// peer maps it to write into its own ring there.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/shm/ring.hpp"

namespace msg {

// A registration a peer may read or write, published in the owner's region.
// key is stored last (release) on registration and cleared first on
// deregistration; 0: a free entry.
struct ShmRegistration {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> base{0};
    std::atomic<uint64_t> len{0};
    std::atomic<uint64_t> access{0};
};

inline constexpr size_t kShmRegistrations = 4096;

class ShmRegion {
  public:
    ShmRegion() = default;
    ~ShmRegion();
    ShmRegion(const ShmRegion &) = delete;
    ShmRegion &operator=(const ShmRegion &) = delete;

    // Makes the region `name` (as shm_open takes it) for a job of `ranks`,
    // with rings of `cells` cells: O_EXCL, mode 0600, its space taken now.
    int create(const std::string &name, int ranks, size_t cells, std::string *error);
    // Maps a peer's region, refusing one whose owner, size or header is not
    // what this job's settings make.
    int attach(const std::string &name, int ranks, size_t cells, std::string *error);
    // Removes the name (the memory stays while it is mapped).
    void unlink();

    RingIndices *indices(int sender) const;
    unsigned char *cells(int sender) const;
    size_t cell_count() const { return cells_; }
    ShmRegistration &registration(size_t i) const;

  private:
    size_t ring_offset(int sender) const;
    int map(int fd, bool creating, std::string *error);

    std::string name_;
    bool named_ = false;  // created here and not yet unlinked
    void *base_ = nullptr;
    size_t size_ = 0;
    int ranks_ = 0;
    size_t cells_ = 0;
};

}  // namespace msg
