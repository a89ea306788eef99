// A sorted range of records read front to back through a ring of buffers (two or more): while
// the merge consumes one, the next blocks of the range are already being read into the others
// (the paper's large per-stream prefetch). Where the blocks come from is a BlockSource: a local
// file through the IoRing (FileSource: phase 2's runs) or a range of another node's work file
// through libremoteio (phase 3b, in the cluster).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sortapp/io_ring.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/space_reclaimer.hpp"

namespace sortapp {

// The reads of one stream: one per buffer slot, started ahead and waited for in turn.
class BlockSource {
  public:
    virtual ~BlockSource() = default;
    // Called once, before any read: the stream reads through slots 0 .. slots-1.
    virtual void set_slots(unsigned slots) = 0;
    // Starts reading `bytes` bytes at byte `offset` into `buffer`, the buffer of `slot`.
    virtual Status start_read(unsigned slot, std::uint8_t *buffer, std::uint64_t offset,
                              std::size_t bytes) = 0;
    // Waits until the read of `slot` has completed; its error if it failed.
    virtual Status finish_read(unsigned slot) = 0;
    // The merge is done with bytes [offset, offset + bytes): they will never be read again.
    virtual void consumed(std::uint64_t offset, std::size_t bytes) {
        (void)offset;
        (void)bytes;
    }
};

class RecordStream {
  public:
    // Records in bytes [first, end) of the source's file, read `block` bytes at a time (rounded
    // down to whole records, at least one) through `depth` buffers (at least 2). Buffers are
    // allocated only for blocks the range has: a short range needs fewer.
    RecordStream(std::unique_ptr<BlockSource> source, const RecordFormat &format,
                 std::uint64_t first, std::uint64_t end, std::size_t block, unsigned depth);
    RecordStream(const RecordStream &) = delete;
    RecordStream &operator=(const RecordStream &) = delete;

    // Starts the first reads, one per buffer.
    Status prefetch();
    // Waits for the first block (after prefetch): record() is then the first record.
    Status wait_first() { return next_buffer(); }

    // The current record, or nullptr once the range is exhausted.
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

    BlockSource &source() { return *source_; }

  private:
    Status start_read(unsigned slot);
    Status next_buffer();

    std::size_t record_size_, key_size_, block_;
    std::uint64_t next_offset_, end_offset_;  // bytes of the range still to request
    std::vector<Buffer> buffers_;
    std::vector<std::size_t> length_;    // bytes of the range each buffer holds (or will)
    std::vector<std::uint64_t> offset_;  // where in the file each buffer's bytes begin
    // Declared after the buffers, so destroyed before them: a source waits there for the reads
    // it still has in flight into them.
    std::unique_ptr<BlockSource> source_;
    unsigned current_ = 0;
    const std::uint8_t *pos_ = nullptr, *end_ = nullptr;
    std::uint64_t prefix_ = 0;
};

using RecordStreams = std::vector<std::unique_ptr<RecordStream>>;

// Starts every stream's reads, then waits for every stream's first block.
Status start_streams(const RecordStreams &streams);

// Blocks of a local file, read through an IoRing (O_DIRECT where the file system allows; then
// the stream's block must be a multiple of io_alignment, as the merge plan's are).
class FileSource final : public BlockSource {
  public:
    explicit FileSource(IoRing &ring) : ring_(ring) {}
    FileSource(const FileSource &) = delete;
    FileSource &operator=(const FileSource &) = delete;
    ~FileSource() override;  // waits for its reads still in flight

    Status open(const std::string &path, bool direct) {
        return File::open_read(path, direct, file_);
    }
    const File &file() const { return file_; }

    void set_slots(unsigned slots) override { requests_.resize(slots); }
    Status start_read(unsigned slot, std::uint8_t *buffer, std::uint64_t offset,
                      std::size_t bytes) override;
    Status finish_read(unsigned slot) override;
    // A scratch file the sort deletes after the merge, opened from `path`: its consumed blocks
    // go back to the file system as the merge goes (space_reclaimer.hpp). Never for an input.
    void release_consumed(SpaceReclaimer &reclaimer, const std::string &path) {
        reclaimer_ = &reclaimer;
        reclaimer_key_ = reclaimer.adopt(file_.fd(), path);
    }
    void consumed(std::uint64_t offset, std::size_t bytes) override {
        if (reclaimer_ != nullptr) reclaimer_->release(reclaimer_key_, offset, bytes);
    }

  private:
    IoRing &ring_;
    File file_;
    std::vector<Request> requests_;
    SpaceReclaimer *reclaimer_ = nullptr;
    int reclaimer_key_ = -1;
};

}  // namespace sortapp
