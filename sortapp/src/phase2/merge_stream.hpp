// One run read front to back through a ring of buffers (two or more): while the merge consumes
// one, the next blocks of the run are already being read into the others (the paper's large
// per-run prefetch).
#pragma once

#include <vector>

#include "sortapp/io_ring.hpp"
#include "sortapp/record_format.hpp"

namespace sortapp {

class MergeStream {
  public:
    MergeStream(IoRing &ring, const RecordFormat &format, std::size_t buffer_size, unsigned depth);
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
    Status post_read(unsigned which);
    Status next_buffer();

    IoRing &ring_;
    std::size_t record_size_, key_size_, buffer_size_;
    File file_;
    std::uint64_t size_ = 0, next_offset_ = 0;
    std::vector<Buffer> buffers_;
    std::vector<Request> requests_;
    std::vector<std::size_t> length_;  // bytes of the run each buffer holds (or will)
    unsigned current_ = 0;
    const std::uint8_t *pos_ = nullptr, *end_ = nullptr;
    std::uint64_t prefix_ = 0;
};

}  // namespace sortapp
