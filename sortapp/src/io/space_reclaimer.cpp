// Hole punching on a thread of its own (see space_reclaimer.hpp).
#include "sortapp/space_reclaimer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace sortapp {

namespace {

// The file system's block.
constexpr std::uint64_t kBlock = 4096;

}  // namespace

SpaceReclaimer::SpaceReclaimer() : thread_([this] { loop(); }) {}

SpaceReclaimer::~SpaceReclaimer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
    for (const Range &g : gathering_) ::close(g.fd);
}

int SpaceReclaimer::adopt(int fd, const std::string &path) {
    const int copy = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (copy < 0) return -1;
    struct stat a {
    }, b{};
    if (::fstat(fd, &a) != 0 || ::fstat(copy, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
        ::close(copy);
        return -1;
    }
    std::lock_guard lock(mutex_);
    gathering_.push_back({copy, 0, 0});
    return copy;
}

void SpaceReclaimer::release(int key, std::uint64_t offset, std::uint64_t bytes) {
    if (key < 0) return;
    {
        std::lock_guard lock(mutex_);
        Range *g = nullptr;
        for (Range &r : gathering_)
            if (r.fd == key) g = &r;
        if (g == nullptr) return;
        if (g->bytes == 0 || g->offset + g->bytes != offset) *g = {key, offset, 0};
        g->bytes += bytes;
        if (g->bytes < kPiece) return;
        // Whole blocks only, so bytes the merge has not read yet are never touched.
        const std::uint64_t first = (g->offset + kBlock - 1) / kBlock * kBlock;
        const std::uint64_t end = (g->offset + g->bytes) / kBlock * kBlock;
        *g = {key, end, g->offset + g->bytes - end};
        queue_.push_back({key, first, end - first});
    }
    wake_.notify_one();
}

void SpaceReclaimer::loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopped, and everything asked for is done
        const Range r = queue_.front();
        queue_.pop_front();
        lock.unlock();
        int rc;
        do {
            rc = ::fallocate(r.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                             static_cast<off_t>(r.offset), static_cast<off_t>(r.bytes));
        } while (rc != 0 && errno == EINTR);
        lock.lock();
    }
}

}  // namespace sortapp
