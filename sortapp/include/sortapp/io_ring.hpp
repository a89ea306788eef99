// Deep asynchronous file I/O over one viaduct::Uring (io_uring, or pread/pwrite threads where
// the kernel refuses it), driven by one thread: requests are posted with a caller-owned Request
// and completed by wait_for()/reap(). Short transfers are continued inside the ring, so a
// completed request has moved all its bytes or carries an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "sortapp/status.hpp"
#include "viaduct/uring.hpp"

namespace sortapp {

// An owned file descriptor plus what was learned when opening it.
class File {
  public:
    File() = default;
    File(const File &) = delete;
    File &operator=(const File &) = delete;
    File(File &&other) noexcept { *this = std::move(other); }
    File &operator=(File &&other) noexcept;
    ~File() { close(); }

    // Opens for reading; tries O_DIRECT first when `direct`, falls back to buffered I/O where
    // the file system refuses it.
    static Status open_read(const std::string &path, bool direct, File &out);
    // Creates (exclusively unless `truncate`) for writing, O_DIRECT where possible; never
    // through a symbolic link. A new file is private (0600): runs and work files are scratch.
    static Status create(const std::string &path, bool direct, bool truncate, File &out);

    int fd() const { return fd_; }
    bool direct() const { return direct_; }
    const std::string &path() const { return path_; }
    std::uint64_t size() const;
    // Drops O_DIRECT for the unaligned tail of a file.
    Status set_buffered();
    // Reserves the file's first `bytes` on disk (viaduct::reserve_space): a disk too full for
    // it fails now, by name.
    Status reserve(std::uint64_t bytes);
    void close();

  private:
    int fd_ = -1;
    bool direct_ = false;
    std::string path_;
};

// Direct I/O needs buffers, offsets and lengths aligned to this.
inline constexpr std::size_t io_alignment = 4096;

// How often a buffer is filled, which chooses its pages. One filled many times (a run slot
// of two passes, a reader's or writer's buffer) asks for huge pages when large: one fault per
// 2 MiB and fewer TLB misses over its many passes. One filled once (the single run of one
// pass) keeps ordinary pages: a fresh huge page comes from the free lists' largest blocks,
// which a virtual machine's balloon hands back to its host, so on such machines its first
// touch costs host faults as well as the zeroing (docs/sortapp.md, Pages).
enum class Fill { many, once };

// Page-aligned anonymous memory (mmap), freed on destruction.
class Buffer {
  public:
    Buffer() = default;
    explicit Buffer(std::size_t bytes, Fill fill = Fill::many);
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    Buffer(Buffer &&other) noexcept { *this = std::move(other); }
    Buffer &operator=(Buffer &&other) noexcept;
    ~Buffer();
    std::uint8_t *data() const { return data_; }
    std::size_t size() const { return size_; }
    bool valid() const { return data_ != nullptr || size_ == 0; }

  private:
    std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
};

// Faults in the first `bytes` of `buffer` (all of it at most) ahead of their first use, 8 MiB
// at a time with MADV_POPULATE_WRITE, which costs about three quarters of a fault per page,
// until done or asked to stop: for a helper thread while the buffer's owner waits for data.
// Where the kernel lacks the call, the pages fault on first touch as before.
void prefault(const Buffer &buffer, std::size_t bytes, std::stop_token stop);

struct Request {
    enum class Kind { read, write };
    Kind kind = Kind::read;
    const File *file = nullptr;
    std::uint8_t *buffer = nullptr;
    std::size_t length = 0;
    std::uint64_t offset = 0;
    std::size_t required = 0;  // reads: end of file after this many bytes is fine (0: length)
    std::size_t done = 0;      // bytes transferred so far
    bool pending = false;
    int error = 0;        // errno of a failed request; EIO-like for an unexpected end of file
    viaduct::UringOp op;  // the transfer in flight
};

class IoRing {
  public:
    IoRing() = default;
    IoRing(const IoRing &) = delete;
    IoRing &operator=(const IoRing &) = delete;
    ~IoRing();

    // io_uring where the kernel allows it unless `backend` asks for threads.
    Status init(unsigned depth,
                viaduct::Uring::Backend backend = viaduct::Uring::Backend::automatic);
    // "io_uring" or "threads" once initialized.
    const char *backend_name() const { return ring_ ? ring_->name() : ""; }
    unsigned depth() const { return depth_; }
    unsigned in_flight() const { return in_flight_; }

    // Posts a request (submitted at once). The Request must stay alive until completed.
    Status post(Request &request);
    // Waits until `request` is no longer pending; other completions are processed meanwhile.
    Status wait_for(Request &request);
    // Waits for at least one completion when anything is in flight.
    Status reap_one();
    // Waits for everything in flight.
    Status drain();

  private:
    Status submit(Request &request);
    Status complete(viaduct::UringOp *op);

    std::unique_ptr<viaduct::Uring> ring_;
    unsigned depth_ = 0;
    unsigned in_flight_ = 0;
};

// Reads bytes [offset, offset + bytes) of file into buffer with requests of io_size bytes,
// as many in flight as the ring is deep. With direct I/O, offset must be aligned and buffer
// must have room for bytes rounded up to io_alignment. progress(n) is told of each n bytes read.
Status read_sequential(IoRing &ring, const File &file, std::uint8_t *buffer, std::uint64_t offset,
                       std::uint64_t bytes, std::size_t io_size,
                       const std::function<void(std::uint64_t)> &progress = {});

// The error text for a finished request: "reading F at offset O: strerror".
Status request_status(const Request &request);

}  // namespace sortapp
