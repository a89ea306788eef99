// One run read front to back through two buffers: while the merge consumes one, the next block
// of the run is already being read into the other (the paper's large per-run prefetch).
#pragma once

#include "sortapp/io_ring.hpp"
#include "sortapp/record_format.hpp"

namespace sortapp {

class MergeStream {
public:
    MergeStream(IoRing &ring, const RecordFormat &format, std::size_t buffer_size);
    MergeStream(const MergeStream &) = delete;
    MergeStream &operator=(const MergeStream &) = delete;
    ~MergeStream();

    Status open(const std::string &path, bool direct);
    // The current record, or nullptr when the run is exhausted.
    const std::uint8_t *record() const { return pos_; }
    std::uint64_t prefix() const { return prefix_; }

    Status advance() {
        pos_ += record_size_;
        if (pos_ != end_) {
            prefix_ = key_prefix(pos_, key_size_);
            return Status::ok();
        }
        return next_buffer();
    }

private:
    Status post_read(int which);
    Status next_buffer();

    IoRing &ring_;
    std::size_t record_size_, key_size_, buffer_size_;
    File file_;
    std::uint64_t size_ = 0, next_offset_ = 0;
    Buffer buffers_[2];
    Request requests_[2];
    std::size_t length_[2] = {0, 0};  // bytes of the run each buffer holds (or will)
    int current_ = 0;
    const std::uint8_t *pos_ = nullptr, *end_ = nullptr;
    std::uint64_t prefix_ = 0;
};

}  // namespace sortapp
