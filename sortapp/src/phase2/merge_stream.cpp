// Double-buffered run reader. Blocks of the run go alternately to buffer 0 and 1; a buffer is
// refilled with the next unassigned block as soon as the merge has consumed it.
#include "phase2/merge_stream.hpp"

namespace sortapp {

MergeStream::MergeStream(IoRing &ring, const RecordFormat &format, std::size_t buffer_size)
    : ring_(ring),
      record_size_(format.record_size),
      key_size_(format.key_size),
      buffer_size_(buffer_size) {}

MergeStream::~MergeStream() {
    for (Request &r : requests_) {
        if (!ring_.wait_for(r)) break;
    }
}

Status MergeStream::open(const std::string &path, bool direct) {
    SORTAPP_TRY(File::open_read(path, direct, file_));
    size_ = file_.size();
    if (size_ % record_size_ != 0) return Status::error(path + ": run has a partial record");
    buffers_[0] = Buffer(buffer_size_);
    buffers_[1] = Buffer(buffer_size_);
    SORTAPP_TRY(post_read(0));
    SORTAPP_TRY(post_read(1));
    current_ = 1;
    return next_buffer();
}

Status MergeStream::post_read(int which) {
    Request &r = requests_[which];
    std::size_t len = std::size_t(std::min<std::uint64_t>(size_ - next_offset_, buffer_size_));
    length_[which] = len;
    if (len == 0) return Status::ok();
    r.kind = Request::Kind::read;
    r.file = &file_;
    r.buffer = buffers_[which].data();
    r.offset = next_offset_;
    r.required = len;
    r.length = file_.direct() ? (len + io_alignment - 1) / io_alignment * io_alignment : len;
    next_offset_ += len;
    return ring_.post(r);
}

Status MergeStream::next_buffer() {
    if (pos_ != nullptr) SORTAPP_TRY(post_read(current_));  // refill what was just consumed
    current_ ^= 1;
    if (length_[current_] == 0) {
        pos_ = end_ = nullptr;
        return Status::ok();
    }
    Request &r = requests_[current_];
    SORTAPP_TRY(ring_.wait_for(r));
    SORTAPP_TRY(request_status(r));
    pos_ = buffers_[current_].data();
    end_ = pos_ + length_[current_];
    prefix_ = key_prefix(pos_, key_size_);
    return Status::ok();
}

}  // namespace sortapp
