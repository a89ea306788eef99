// Files, aligned buffers and the io_uring request loop.
#include "sortapp/io_ring.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <new>
#include <vector>

#include "viaduct/reserve.hpp"

namespace sortapp {

File &File::operator=(File &&other) noexcept {
    if (this != &other) {
        close();
        fd_ = other.fd_;
        direct_ = other.direct_;
        path_ = std::move(other.path_);
        other.fd_ = -1;
    }
    return *this;
}

void File::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

std::uint64_t File::size() const {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) return 0;
    return std::uint64_t(st.st_size);
}

Status File::open_read(const std::string &path, bool direct, File &out) {
    File f;
    f.path_ = path;
    if (direct) {
        f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
        f.direct_ = f.fd_ >= 0;
    }
    if (f.fd_ < 0) f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd_ < 0) return Status::from_errno("cannot open " + path + " for reading", errno);
    struct stat st {};
    if (::fstat(f.fd_, &st) == 0 && !S_ISREG(st.st_mode)) {
        return Status::error(path + " is not a regular file");
    }
    if (!f.direct_) ::posix_fadvise(f.fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    out = std::move(f);
    return Status::ok();
}

Status File::create(const std::string &path, bool direct, bool truncate, File &out) {
    File f;
    f.path_ = path;
    // Never through a symbolic link: what is written is the file named, or nothing.
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : O_EXCL);
    if (direct) {
        f.fd_ = ::open(path.c_str(), flags | O_DIRECT, 0600);
        f.direct_ = f.fd_ >= 0;
        // The file may exist now even though O_DIRECT was refused: do not fail on O_EXCL.
        if (f.fd_ < 0 && errno == EINVAL) flags &= ~O_EXCL;
    }
    if (f.fd_ < 0) f.fd_ = ::open(path.c_str(), flags, 0600);
    if (f.fd_ < 0) return Status::from_errno("cannot create " + path, errno);
    out = std::move(f);
    return Status::ok();
}

Status File::set_buffered() {
    if (!direct_) return Status::ok();
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) {
        return Status::from_errno("clearing O_DIRECT on " + path_, errno);
    }
    direct_ = false;
    return Status::ok();
}

Status File::reserve(std::uint64_t bytes) {
    const int err = viaduct::reserve_space(fd_, bytes);
    if (err == 0) return Status::ok();
    return Status::from_errno("reserving " + std::to_string(bytes) + " bytes for " + path_, err);
}

namespace {
constexpr std::size_t kHugePageHint = 4u << 20;  // buffers this large ask for huge pages
constexpr std::size_t kHugePage = 2u << 20;

// bytes of anonymous memory starting on a huge page boundary, so that every whole huge page of
// it can be one (an unaligned mapping loses the pages its ends cut); nullptr if none.
void *map_aligned(std::size_t bytes) {
    const std::size_t span = bytes + kHugePage;
    void *p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    const std::size_t end = (bytes + io_alignment - 1) / io_alignment * io_alignment;
    if (aligned > start) ::munmap(p, aligned - start);
    if (aligned + end < start + span)
        ::munmap(reinterpret_cast<void *>(aligned + end), start + span - aligned - end);
    return reinterpret_cast<void *>(aligned);
}
}  // namespace

Buffer::Buffer(std::size_t bytes, Fill fill) : size_(bytes) {
    if (bytes == 0) return;
    void *p = bytes >= kHugePageHint ? map_aligned(bytes)
                                     : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || p == nullptr) {
        size_ = 0;
        throw std::bad_alloc();
    }
    data_ = static_cast<std::uint8_t *>(p);
    // Large buffers filled many times ask for huge pages (the kernel may refuse, leaving
    // ordinary ones); see Fill for why one filled once does not.
    if (fill == Fill::many && bytes >= kHugePageHint) ::madvise(p, bytes, MADV_HUGEPAGE);
}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) ::munmap(data_, size_);
        data_ = other.data_;
        size_ = other.size_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

Buffer::~Buffer() {
    if (data_ != nullptr) ::munmap(data_, size_);
}

void prefault(const Buffer &buffer, std::size_t bytes, std::stop_token stop) {
#ifdef MADV_POPULATE_WRITE
    constexpr std::size_t chunk = 8u << 20;
    const std::size_t end = std::min(bytes, buffer.size());
    for (std::size_t at = 0; at < end && !stop.stop_requested(); at += chunk) {
        if (::madvise(buffer.data() + at, std::min(chunk, end - at), MADV_POPULATE_WRITE) != 0)
            return;  // an old kernel (EINVAL), or no memory left: first touches will tell
    }
#else
    (void)buffer, (void)bytes, (void)stop;
#endif
}

IoRing::~IoRing() {
    // Requests still in flight refer to caller memory: finish them before leaving.
    while (ring_ && in_flight_ > 0 && reap_one()) {
    }
}

Status IoRing::init(unsigned depth, viaduct::Uring::Backend backend) {
    if (depth == 0) depth = 1;
    ring_ = viaduct::Uring::open(depth, backend);
    depth_ = depth;
    return Status::ok();
}

Status IoRing::submit(Request &r) {
    r.op = viaduct::UringOp{.fd = r.file->fd(),
                            .buf = r.buffer + r.done,
                            .len = r.length - r.done,
                            .offset = r.offset + r.done,
                            .write = r.kind == Request::Kind::write,
                            .result = 0,
                            .user = &r};
    ring_->submit(&r.op);
    return Status::ok();
}

Status IoRing::post(Request &r) {
    // Never more requests in flight than the ring's completion queue holds.
    while (in_flight_ >= depth_) SORTAPP_TRY(reap_one());
    r.done = 0;
    r.error = 0;
    r.pending = true;
    if (r.length == 0) {
        r.pending = false;
        return Status::ok();
    }
    SORTAPP_TRY(submit(r));
    ++in_flight_;
    return Status::ok();
}

Status IoRing::complete(viaduct::UringOp *op) {
    auto *r = static_cast<Request *>(op->user);
    const ssize_t res = op->result;
    if (res == -EINTR || res == -EAGAIN) return submit(*r);
    if (res < 0) {
        r->error = int(-res);
    } else if (res == 0 && r->kind == Request::Kind::read && r->required != 0 &&
               r->done >= r->required) {
        // A direct read rounded up past the end of the file: it has all it needs.
    } else if (res == 0) {
        // End of file before the request was satisfied (or a write that made no progress).
        r->error = r->kind == Request::Kind::read ? ENODATA : ENOSPC;
    } else {
        r->done += std::size_t(res);
        if (r->done < r->length) return submit(*r);  // a short transfer: continue it
    }
    r->pending = false;
    --in_flight_;
    return Status::ok();
}

Status IoRing::reap_one() {
    if (in_flight_ == 0) return Status::ok();
    viaduct::UringOp *op = ring_->wait();
    if (op == nullptr) return Status::error("io_uring: waiting for a completion failed");
    return complete(op);
}

Status IoRing::wait_for(Request &r) {
    while (r.pending) SORTAPP_TRY(reap_one());
    return Status::ok();
}

Status IoRing::drain() {
    while (in_flight_ > 0) SORTAPP_TRY(reap_one());
    return Status::ok();
}

Status read_sequential(IoRing &ring, const File &file, std::uint8_t *buffer, std::uint64_t offset,
                       std::uint64_t bytes, std::size_t io_size,
                       const std::function<void(std::uint64_t)> &progress) {
    const std::size_t n = std::size_t((bytes + io_size - 1) / io_size);
    std::vector<Request> requests(n);
    Status status;
    std::size_t completed = 0;
    auto collect = [&](std::size_t upto) {
        // Requests complete roughly in order; report and check them in order.
        for (; completed < upto && !requests[completed].pending; ++completed) {
            Status s = request_status(requests[completed]);
            if (!s && status) status = s;
            if (progress) progress(requests[completed].required);
        }
    };
    for (std::size_t i = 0; i < n && status; ++i) {
        Request &r = requests[i];
        std::uint64_t start = std::uint64_t(i) * io_size;
        std::size_t len = std::size_t(std::min<std::uint64_t>(io_size, bytes - start));
        r.kind = Request::Kind::read;
        r.file = &file;
        r.buffer = buffer + start;
        r.offset = offset + start;
        r.required = len;
        r.length = file.direct() ? (len + io_alignment - 1) / io_alignment * io_alignment : len;
        Status s = ring.post(r);
        if (!s) status = s;
        collect(i);
    }
    for (std::size_t i = completed; i < n; ++i) {
        Status s = ring.wait_for(requests[i]);
        if (!s && status) status = s;
    }
    collect(n);
    return status;
}

Status request_status(const Request &r) {
    if (r.error == 0) return Status::ok();
    std::string what = (r.kind == Request::Kind::read ? "reading " : "writing ") + r.file->path() +
                       " at offset " + std::to_string(r.offset + r.done);
    if (r.error == ENODATA) return Status::error(what + ": file ended early");
    if (r.error == ENOSPC) return Status::error(what + ": disk full (No space left on device)");
    return Status::from_errno(what, r.error);
}

}  // namespace sortapp
