// The shm transport's region: its layout, its creation and the checks a
// peer's region must pass before it is used.
#include "transport/shm/region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/host/signal_unlink.hpp"

namespace msg {

namespace {

constexpr uint64_t kMagic = 0x7669616475637452ULL;  // "viaductR"
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kTableBytes = kShmRegistrations * sizeof(ShmRegistration);

struct Header {
    uint64_t magic;
    uint32_t version;
    uint32_t ranks;
    uint64_t cells;
    uint64_t size;
};

size_t ring_bytes(size_t cells) {
    return sizeof(RingIndices) + cells * kRingCell;
}

size_t region_bytes(int ranks, size_t cells) {
    return kHeaderBytes + kTableBytes + static_cast<size_t>(ranks) * ring_bytes(cells);
}

std::string failure(const std::string &what, const std::string &name, int err) {
    return what + " /dev/shm" + name + ": " + std::strerror(err);
}

}  // namespace

ShmRegion::~ShmRegion() {
    if (base_ != nullptr) munmap(base_, size_);
    unlink();
}

int ShmRegion::create(const std::string &name, int ranks, size_t cells, std::string *error) {
    name_ = name;
    ranks_ = ranks;
    cells_ = cells;
    size_ = region_bytes(ranks, cells);
    // Handed to the signal handler before the name exists: no moment would leave it.
    unlink_on_signal(name_);
    const int fd =
        shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        const int err = errno;
        forget_on_signal(name_);
        return *error = failure("cannot create", name_, err), -err;
    }
    named_ = true;
    // Its space is taken now: a full /dev/shm is this error, not a SIGBUS mid-job.
    int err = posix_fallocate(fd, 0, static_cast<off_t>(size_));
    if (err != 0) {
        ::close(fd);
        return *error = failure("cannot reserve the space of", name_, err), -err;
    }
    const int rc = map(fd, true, error);
    ::close(fd);
    if (rc != 0) return rc;
    auto *h = static_cast<Header *>(base_);
    h->version = kVersion;
    h->ranks = static_cast<uint32_t>(ranks);
    h->cells = cells;
    h->size = size_;
    h->magic = kMagic;
    return 0;
}

int ShmRegion::attach(const std::string &name, int ranks, size_t cells, std::string *error) {
    name_ = name;
    ranks_ = ranks;
    cells_ = cells;
    size_ = region_bytes(ranks, cells);
    const int fd = shm_open(name_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        const int err = errno;
        return *error = failure("cannot open", name_, err), -err;
    }
    struct stat st {};
    const char *why = nullptr;
    if (fstat(fd, &st) != 0)
        why = "cannot be examined";
    else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
        why = "is not a file of this user's that only this user may open";
    else if (static_cast<uint64_t>(st.st_size) != size_)
        why = "is not the size this job's settings make";
    int rc = why == nullptr ? map(fd, false, error) : -EINVAL;
    ::close(fd);
    if (why != nullptr) *error = "/dev/shm" + name_ + " " + why;
    if (rc != 0) return rc;
    const auto *h = static_cast<const Header *>(base_);
    if (h->magic != kMagic || h->version != kVersion || h->ranks != static_cast<uint32_t>(ranks) ||
        h->cells != cells || h->size != size_) {
        *error = "/dev/shm" + name_ + " does not hold this job's shared-memory region";
        return -EINVAL;
    }
    return 0;
}

int ShmRegion::map(int fd, bool creating, std::string *error) {
    void *m = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        const int err = errno;
        return *error = failure("cannot map", name_, err), -err;
    }
    base_ = m;
    if (creating)
        for (size_t i = 0; i < kShmRegistrations; ++i) new (&registration(i)) ShmRegistration();
    return 0;
}

void ShmRegion::unlink() {
    if (!named_) return;
    shm_unlink(name_.c_str());
    forget_on_signal(name_);
    named_ = false;
}

size_t ShmRegion::ring_offset(int sender) const {
    return kHeaderBytes + kTableBytes + static_cast<size_t>(sender) * ring_bytes(cells_);
}

RingIndices *ShmRegion::indices(int sender) const {
    return reinterpret_cast<RingIndices *>(static_cast<char *>(base_) + ring_offset(sender));
}

unsigned char *ShmRegion::cells(int sender) const {
    return static_cast<unsigned char *>(base_) + ring_offset(sender) + sizeof(RingIndices);
}

ShmRegistration &ShmRegion::registration(size_t i) const {
    return reinterpret_cast<ShmRegistration *>(static_cast<char *>(base_) + kHeaderBytes)[i];
}

}  // namespace msg
