// Prefetching run reader. Blocks of the run go to buffers 0, 1, ..., depth-1 in turn; a buffer
// is refilled with the next unassigned block as soon as the merge has consumed it.
#include "phase2/merge_stream.hpp"

namespace sortapp {

MergeStream::MergeStream(IoRing &ring, const RecordFormat &format, std::size_t buffer_size,
                         unsigned depth)
    : ring_(ring),
      record_size_(format.record_size),
      key_size_(format.key_size),
      buffer_size_(buffer_size),
      requests_(std::max(2u, depth)),
      length_(requests_.size(), 0) {}

MergeStream::~MergeStream() {
    for (Request &r : requests_) {
        if (!ring_.wait_for(r)) break;
    }
}

Status MergeStream::open(const std::string &path, bool direct) {
    SORTAPP_TRY(File::open_read(path, direct, file_));
    size_ = file_.size();
    if (size_ % record_size_ != 0) return Status::error(path + ": run has a partial record");
    for (unsigned b = 0; b < requests_.size(); ++b) {
        // Short runs need fewer buffers.
        if (next_offset_ < size_)
            buffers_.emplace_back(buffer_size_);
        else
            buffers_.emplace_back();
        SORTAPP_TRY(post_read(b));
    }
    current_ = unsigned(requests_.size()) - 1;
    return next_buffer();
}

Status MergeStream::post_read(unsigned which) {
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
    current_ = (current_ + 1) % unsigned(requests_.size());
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
