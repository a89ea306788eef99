// A lock-free single-producer, single-consumer packet ring in shared memory:
// fixed 64-byte cells, a packet taking as many consecutive cells (wrapping
// round the end) as its length word and bytes need. The two indices only
// grow; each side keeps its own copy and publishes it with a release store,
// so neither side ever waits on the other, and a dead peer leaves nothing
// held. Everything read from the ring is checked before use: the other side
// may be broken or hostile.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace msg {

inline constexpr size_t kRingCell = 64;

// The two indices, in cells, each on its own cache line.
struct RingIndices {
    alignas(64) std::atomic<uint64_t> head{0};  // cells the producer has published
    alignas(64) std::atomic<uint64_t> tail{0};  // cells the consumer has freed
};
static_assert(sizeof(RingIndices) == 128);

// Cells a packet of `len` bytes takes (its length word included).
inline constexpr uint64_t ring_cells_for(uint64_t len) {
    return (len + sizeof(uint64_t) + kRingCell - 1) / kRingCell;
}

class RingWriter {
  public:
    RingWriter() = default;
    RingWriter(RingIndices *indices, unsigned char *cells, size_t count);
    // Copies the iovec as one packet. 0; -EAGAIN while the consumer has not
    // freed room for it; -EMSGSIZE for a packet the ring could never hold;
    // -EPROTO if the consumer's index is impossible.
    int push(const struct iovec *iov, size_t count);
    bool attached() const { return indices_ != nullptr; }

  private:
    RingIndices *indices_ = nullptr;
    unsigned char *data_ = nullptr;
    size_t count_ = 0;
    uint64_t head_ = 0;       // ours; never read back from shared memory
    uint64_t tail_seen_ = 0;  // the consumer's, as last read
};

class RingReader {
  public:
    enum class Status { Empty, Packet, Broken };
    RingReader() = default;
    RingReader(RingIndices *indices, unsigned char *cells, size_t count);
    // True if a packet may be waiting (one load; no checks).
    bool maybe_ready() const {
        return indices_ != nullptr && indices_->head.load(std::memory_order_acquire) != tail_;
    }
    // Takes the oldest packet: Packet with *len its length (min(*len, cap)
    // bytes copied into buf), Empty, or Broken when the producer's index or
    // the packet's length word cannot be right (nothing is copied, and the
    // ring is read no more).
    Status pop(void *buf, size_t cap, size_t *len);

  private:
    RingIndices *indices_ = nullptr;
    const unsigned char *data_ = nullptr;
    size_t count_ = 0;
    uint64_t tail_ = 0;  // ours; never read back from shared memory
    bool broken_ = false;
};

}  // namespace msg
