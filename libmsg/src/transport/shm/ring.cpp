// The ring's copies in and out, each split in two where a packet wraps
// round the end of the cells.
#include "transport/shm/ring.hpp"

#include <cerrno>
#include <cstring>

namespace msg {

namespace {

// Copies n bytes into the ring's bytes at offset `at` (modulo size).
void copy_in(unsigned char *ring, size_t size, size_t at, const void *from, size_t n) {
    if (n == 0) return;  // an empty piece may have no address
    const auto *src = static_cast<const unsigned char *>(from);
    const size_t first = n < size - at ? n : size - at;
    std::memcpy(ring + at, src, first);
    if (first < n) std::memcpy(ring, src + first, n - first);
}

void copy_out(const unsigned char *ring, size_t size, size_t at, void *to, size_t n) {
    if (n == 0) return;
    auto *dst = static_cast<unsigned char *>(to);
    const size_t first = n < size - at ? n : size - at;
    std::memcpy(dst, ring + at, first);
    if (first < n) std::memcpy(dst + first, ring, n - first);
}

}  // namespace

RingWriter::RingWriter(RingIndices *indices, unsigned char *cells, size_t count)
    : indices_(indices), data_(cells), count_(count) {
    head_ = indices->head.load(std::memory_order_relaxed);
    tail_seen_ = indices->tail.load(std::memory_order_acquire);
}

int RingWriter::push(const struct iovec *iov, size_t count) {
    uint64_t len = 0;
    for (size_t i = 0; i < count; ++i) len += iov[i].iov_len;
    const uint64_t need = ring_cells_for(len);
    if (need > count_) return -EMSGSIZE;
    if (count_ - (head_ - tail_seen_) < need) {
        tail_seen_ = indices_->tail.load(std::memory_order_acquire);
        // Freed cells the producer never published: the consumer is broken.
        if (head_ - tail_seen_ > count_) return -EPROTO;
        if (count_ - (head_ - tail_seen_) < need) return -EAGAIN;
    }
    const size_t size = count_ * kRingCell;
    size_t at = static_cast<size_t>(head_ % count_) * kRingCell;
    std::memcpy(data_ + at, &len, sizeof len);  // a cell holds the word whole
    at = (at + sizeof len) % size;
    for (size_t i = 0; i < count; ++i) {
        copy_in(data_, size, at, iov[i].iov_base, iov[i].iov_len);
        at = (at + iov[i].iov_len) % size;
    }
    head_ += need;
    indices_->head.store(head_, std::memory_order_release);
    return 0;
}

RingReader::RingReader(RingIndices *indices, unsigned char *cells, size_t count)
    : indices_(indices), data_(cells), count_(count) {
    tail_ = indices->tail.load(std::memory_order_relaxed);
}

RingReader::Status RingReader::pop(void *buf, size_t cap, size_t *len) {
    if (broken_ || indices_ == nullptr) return broken_ ? Status::Broken : Status::Empty;
    const uint64_t head = indices_->head.load(std::memory_order_acquire);
    const uint64_t ready = head - tail_;
    if (ready == 0) return Status::Empty;
    const size_t size = count_ * kRingCell;
    const size_t at = static_cast<size_t>(tail_ % count_) * kRingCell;
    uint64_t word = 0;
    std::memcpy(&word, data_ + at, sizeof word);  // read once: the producer may rewrite it
    // More cells published than the ring has, or a packet longer than the
    // cells published: nothing here can be trusted again.
    if (ready > count_ || word > size || ring_cells_for(word) > ready) {
        broken_ = true;
        return Status::Broken;
    }
    *len = static_cast<size_t>(word);
    copy_out(data_, size, (at + sizeof word) % size, buf, *len < cap ? *len : cap);
    tail_ += ring_cells_for(word);
    indices_->tail.store(tail_, std::memory_order_release);
    return Status::Packet;
}

}  // namespace msg
