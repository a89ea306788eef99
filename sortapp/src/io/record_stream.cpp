// Prefetching record streams (see record_stream.hpp). Blocks of the range go to buffers 0, 1,
// ..., depth-1 in turn; a buffer is refilled with the next unassigned block as soon as the
// merge has consumed it.
#include "sortapp/record_stream.hpp"

#include <algorithm>

namespace sortapp {

RecordStream::RecordStream(std::unique_ptr<BlockSource> source, const RecordFormat &format,
                           std::uint64_t first, std::uint64_t end, std::size_t block,
                           unsigned depth)
    : record_size_(format.record_size),
      key_size_(format.key_size),
      block_(std::max(block / format.record_size, std::size_t(1)) * format.record_size),
      next_offset_(first),
      end_offset_(std::max(first, end)),
      length_(std::max(2u, depth), 0),
      offset_(length_.size(), 0),
      source_(std::move(source)) {
    source_->set_slots(unsigned(length_.size()));
}

Status RecordStream::prefetch() {
    for (unsigned b = 0; b < length_.size(); ++b) {
        if (next_offset_ < end_offset_)
            buffers_.emplace_back(block_);
        else
            buffers_.emplace_back();
        SORTAPP_TRY(start_read(b));
    }
    current_ = unsigned(length_.size()) - 1;
    return Status::ok();
}

Status RecordStream::start_read(unsigned slot) {
    std::size_t len = std::size_t(std::min<std::uint64_t>(end_offset_ - next_offset_, block_));
    length_[slot] = len;
    offset_[slot] = next_offset_;
    if (len == 0) return Status::ok();
    SORTAPP_TRY(source_->start_read(slot, buffers_[slot].data(), next_offset_, len));
    next_offset_ += len;
    return Status::ok();
}

Status RecordStream::next_buffer() {
    if (pos_ != nullptr) {  // refill what was just consumed
        source_->consumed(offset_[current_], length_[current_]);
        SORTAPP_TRY(start_read(current_));
    }
    current_ = (current_ + 1) % unsigned(length_.size());
    if (length_[current_] == 0) {
        pos_ = end_ = nullptr;
        return Status::ok();
    }
    SORTAPP_TRY(source_->finish_read(current_));
    pos_ = buffers_[current_].data();
    end_ = pos_ + length_[current_];
    prefix_ = key_prefix(pos_, key_size_);
    return Status::ok();
}

Status start_streams(const RecordStreams &streams) {
    for (const auto &s : streams) SORTAPP_TRY(s->prefetch());
    for (const auto &s : streams) SORTAPP_TRY(s->wait_first());
    return Status::ok();
}

FileSource::~FileSource() {
    for (Request &r : requests_) {
        if (!ring_.wait_for(r)) break;
    }
}

Status FileSource::start_read(unsigned slot, std::uint8_t *buffer, std::uint64_t offset,
                              std::size_t bytes) {
    Request &r = requests_[slot];
    r.kind = Request::Kind::read;
    r.file = &file_;
    r.buffer = buffer;
    r.offset = offset;
    r.required = bytes;
    // O_DIRECT reads whole blocks; the file may end inside the last one.
    r.length = file_.direct() ? (bytes + io_alignment - 1) / io_alignment * io_alignment : bytes;
    return ring_.post(r);
}

Status FileSource::finish_read(unsigned slot) {
    Request &r = requests_[slot];
    SORTAPP_TRY(ring_.wait_for(r));
    return request_status(r);
}

}  // namespace sortapp
