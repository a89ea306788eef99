// Writes a file front to back through a ring of buffers: while one buffer is being filled the
// others are on their way to disk, so producing records and writing them overlap.
#pragma once

#include <cstring>
#include <vector>

#include "sortapp/io_ring.hpp"

namespace sortapp {

class SequentialWriter {
  public:
    // buffer_size must be a multiple of io_alignment.
    SequentialWriter(IoRing &ring, File &file, std::size_t buffer_size, unsigned buffers);
    SequentialWriter(const SequentialWriter &) = delete;
    SequentialWriter &operator=(const SequentialWriter &) = delete;
    ~SequentialWriter();  // waits for its writes still in flight (after an error)

    Status append(const std::uint8_t *data, std::size_t n) {
        if (fill_ + n <= buffer_size_) {
            std::memcpy(current() + fill_, data, n);
            fill_ += n;
            return Status::ok();
        }
        return append_slow(data, n);
    }
    // Direct filling: the free part of the current buffer, then commit(n) once n bytes of it
    // are filled (n <= room).
    std::uint8_t *span(std::size_t &room) {
        room = buffer_size_ - fill_;
        return current() + fill_;
    }
    Status commit(std::size_t n) {
        fill_ += n;
        return fill_ == buffer_size_ ? flush_full() : Status::ok();
    }
    // Writes what is left (the unaligned tail without O_DIRECT), waits for every write and
    // flushes the file to disk when `sync`.
    Status finish(bool sync);
    std::uint64_t bytes_appended() const { return offset_ + fill_; }

  private:
    std::uint8_t *current() { return buffers_[index_].data(); }
    Status append_slow(const std::uint8_t *data, std::size_t n);
    Status flush_full();

    IoRing &ring_;
    File &file_;
    std::size_t buffer_size_;
    std::vector<Buffer> buffers_;
    std::vector<Request> requests_;
    unsigned index_ = 0;
    std::size_t fill_ = 0;
    std::uint64_t offset_ = 0;  // file offset of the current buffer
    Status error_;
};

}  // namespace sortapp
