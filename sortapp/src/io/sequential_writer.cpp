// The write-behind buffer ring.
#include "sortapp/sequential_writer.hpp"

#include <unistd.h>

#include <cerrno>

namespace sortapp {

SequentialWriter::SequentialWriter(IoRing &ring, File &file, std::size_t buffer_size,
                                   unsigned buffers)
    : ring_(ring), file_(file), buffer_size_(buffer_size), requests_(std::max(2u, buffers)) {
    for (std::size_t i = 0; i < requests_.size(); ++i) buffers_.emplace_back(buffer_size);
}

SequentialWriter::~SequentialWriter() {
    for (Request &r : requests_) {
        if (!ring_.wait_for(r)) break;
    }
}

Status SequentialWriter::flush_full() {
    Request &r = requests_[index_];
    r.kind = Request::Kind::write;
    r.file = &file_;
    r.buffer = current();
    r.length = fill_;
    r.offset = offset_;
    SORTAPP_TRY(ring_.post(r));
    offset_ += fill_;
    fill_ = 0;
    index_ = (index_ + 1) % unsigned(requests_.size());
    // The next buffer may still be on its way to disk.
    Request &next = requests_[index_];
    SORTAPP_TRY(ring_.wait_for(next));
    return request_status(next);
}

Status SequentialWriter::append_slow(const std::uint8_t *data, std::size_t n) {
    while (n > 0) {
        std::size_t take = std::min(n, buffer_size_ - fill_);
        std::memcpy(current() + fill_, data, take);
        fill_ += take;
        data += take;
        n -= take;
        if (fill_ == buffer_size_) SORTAPP_TRY(flush_full());
    }
    return Status::ok();
}

Status SequentialWriter::finish(bool sync) {
    std::size_t aligned = file_.direct() ? fill_ / io_alignment * io_alignment : fill_;
    std::size_t tail = fill_ - aligned;
    if (aligned > 0) {
        Request &r = requests_[index_];
        r.kind = Request::Kind::write;
        r.file = &file_;
        r.buffer = current();
        r.length = aligned;
        r.offset = offset_;
        SORTAPP_TRY(ring_.post(r));
    }
    for (Request &r : requests_) {
        SORTAPP_TRY(ring_.wait_for(r));
        SORTAPP_TRY(request_status(r));
    }
    if (tail > 0) {
        SORTAPP_TRY(file_.set_buffered());
        Request &r = requests_[index_];
        r.kind = Request::Kind::write;
        r.file = &file_;
        r.buffer = current() + aligned;
        r.length = tail;
        r.offset = offset_ + aligned;
        SORTAPP_TRY(ring_.post(r));
        SORTAPP_TRY(ring_.wait_for(r));
        SORTAPP_TRY(request_status(r));
    }
    offset_ += fill_;
    fill_ = 0;
    if (sync && ::fdatasync(file_.fd()) != 0) {
        int err = errno;
        return Status::from_errno("flushing " + file_.path() + " to disk", err);
    }
    return Status::ok();
}

}  // namespace sortapp
