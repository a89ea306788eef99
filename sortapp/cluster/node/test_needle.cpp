// SORTAPP_TEST_NEEDLE (see test_needle.hpp): the spinning children of the cpu needle, the slow
// writes of the disk needle and the major faults of the memory needle.
#include "node/test_needle.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sortapp/io_ring.hpp"
#include "viaduct/env.hpp"

namespace sortapp::cluster {

namespace {

enum class Kind { none, cpu, disk, memory };

// The kind SORTAPP_TEST_NEEDLE gives `rank`, none when it names another node. A kind it does
// not know is said on stderr, so that a test's typo does not pass for a clean run.
Kind kind_for(int rank) {
    const char *spec = viaduct::env::get("SORTAPP_TEST_NEEDLE");
    if (spec == nullptr) return Kind::none;
    const std::string s = spec;
    const auto colon = s.find(':');
    if (colon == std::string::npos || s.substr(0, colon) != std::to_string(rank)) return Kind::none;
    const std::string kind = s.substr(colon + 1);
    if (kind == "cpu") return Kind::cpu;
    if (kind == "disk") return Kind::disk;
    if (kind == "memory") return Kind::memory;
    std::fprintf(stderr,
                 "sortapp: node %d: SORTAPP_TEST_NEEDLE: no needle '%s' (cpu, disk, memory)\n",
                 rank, kind.c_str());
    return Kind::none;
}

// A spinning child of the cpu needle: it holds none of the node's files, takes the default
// action for every signal (the node's handlers would remove the node's files), and dies with
// the node. Never returns.
[[noreturn]] void hog(pid_t node) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != node) _exit(0);  // the node died before the line above
    close_range(0, ~0u, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    volatile std::uint64_t spins = 0;
    for (;;) spins = spins + 1;
}

// An unnamed file in `dir` (O_TMPFILE: gone when closed), with `flags` beside O_RDWR; -1 when
// the file system refuses it.
int unnamed_file(const std::string &dir, int flags) {
    return open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC | flags, 0600);
}

void refuse(const char *what, const std::string &scratch) {
    std::fprintf(stderr, "sortapp: SORTAPP_TEST_NEEDLE: no %s in %s (%s); not slowed\n", what,
                 scratch.c_str(), std::strerror(errno));
}

// The disk needle's disk: disk_writers threads, each writing one disk_piece_bytes piece of its
// own with O_DIRECT and flushing it (fdatasync: a device cache flush) before the next. The
// file is written whole first, so the pieces overwrite blocks it has: no allocation, hardly
// any journal, only the device and its flushes.
class SlowDisk {
  public:
    explicit SlowDisk(const std::string &scratch) {
        fd_ = unnamed_file(scratch, O_DIRECT);
        pieces_ = Buffer(disk_writers * disk_piece_bytes);
        bool written = fd_ >= 0;
        for (std::size_t at = 0; written && at < pieces_.size(); at += disk_piece_bytes)
            written = pwrite(fd_, pieces_.data() + at, disk_piece_bytes, static_cast<off_t>(at)) ==
                      static_cast<ssize_t>(disk_piece_bytes);
        if (!written || fdatasync(fd_) != 0) {
            refuse("O_DIRECT file", scratch);
            return;
        }
        for (std::size_t i = 0; i < disk_writers; ++i)
            writers_.emplace_back([this, i] { write(i); });
    }
    SlowDisk(const SlowDisk &) = delete;
    SlowDisk &operator=(const SlowDisk &) = delete;
    ~SlowDisk() {
        {
            const std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        changed_.notify_all();
        writers_.clear();  // joins them
        if (fd_ >= 0) close(fd_);
    }

    // Writes `pieces` pieces and returns when they are on the disk.
    void write_pieces(std::uint64_t pieces) {
        std::unique_lock<std::mutex> lk(mu_);
        if (writers_.empty()) return;
        owed_ += pieces;
        changed_.notify_all();
        changed_.wait(lk, [this] { return owed_ == 0 && writing_ == 0; });
    }

  private:
    void write(std::size_t i) {
        const auto at = static_cast<off_t>(i * disk_piece_bytes);
        std::unique_lock<std::mutex> lk(mu_);
        for (;;) {
            changed_.wait(lk, [this] { return stop_ || owed_ > 0; });
            if (stop_) return;
            --owed_;
            ++writing_;
            lk.unlock();
            if (pwrite(fd_, pieces_.data() + at, disk_piece_bytes, at) >= 0) fdatasync(fd_);
            lk.lock();
            --writing_;
            if (owed_ == 0 && writing_ == 0) changed_.notify_all();
        }
    }

    int fd_ = -1;
    Buffer pieces_;
    std::mutex mu_;
    std::condition_variable changed_;
    std::uint64_t owed_ = 0;   // pieces asked for and not yet taken by a writer
    std::size_t writing_ = 0;  // pieces being written
    bool stop_ = false;
    std::vector<std::jthread> writers_;
};

// The memory needle's region: a file written and flushed once, then mapped read-only. Its
// pages are clean, so dropping one costs nothing and reading it back is a read from the disk.
class PagedRegion {
  public:
    explicit PagedRegion(const std::string &scratch) {
        fd_ = unnamed_file(scratch, 0);
        std::vector<char> page(page_bytes, 'm');
        bool written = fd_ >= 0;
        for (std::size_t at = 0; written && at < memory_region_bytes; at += page_bytes)
            written = pwrite(fd_, page.data(), page_bytes, static_cast<off_t>(at)) ==
                      static_cast<ssize_t>(page_bytes);
        if (written && fdatasync(fd_) == 0)
            region_ = mmap(nullptr, memory_region_bytes, PROT_READ, MAP_SHARED, fd_, 0);
        if (region_ == MAP_FAILED) {
            refuse("mapped file", scratch);
            return;
        }
        madvise(region_, memory_region_bytes, MADV_RANDOM);
        posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
    }
    PagedRegion(const PagedRegion &) = delete;
    PagedRegion &operator=(const PagedRegion &) = delete;
    ~PagedRegion() {
        if (region_ != MAP_FAILED) munmap(region_, memory_region_bytes);
        if (fd_ >= 0) close(fd_);
    }

    // Drops `pages` pages and touches them again, in turn over the region: a major fault each.
    void fault(std::uint64_t pages) {
        if (region_ == MAP_FAILED) return;
        // Volatile: the compiler keeps the reads whose values are not used.
        const auto *bytes = static_cast<const volatile unsigned char *>(region_);
        for (; pages > 0; --pages) {
            madvise(static_cast<char *>(region_) + cursor_, page_bytes, MADV_DONTNEED);
            posix_fadvise(fd_, static_cast<off_t>(cursor_), page_bytes, POSIX_FADV_DONTNEED);
            static_cast<void>(bytes[cursor_]);
            cursor_ = (cursor_ + page_bytes) % memory_region_bytes;
        }
    }

  private:
    static constexpr std::size_t page_bytes = 4096;
    int fd_ = -1;
    void *region_ = MAP_FAILED;
    std::size_t cursor_ = 0;
};

// The disk or memory needle between two progress reports of the local phases.
class Slowdown {
  public:
    Slowdown(Kind kind, const std::string &scratch) {
        if (kind == Kind::disk) disk_ = std::make_unique<SlowDisk>(scratch);
        if (kind == Kind::memory) region_ = std::make_unique<PagedRegion>(scratch);
    }

    void progress(const char *phase, std::uint64_t done) {
        const std::lock_guard<std::mutex> lk(mu_);
        if (phase_ != phase) {  // every phase counts its bytes from 0
            phase_ = phase;
            last_done_ = 0;
        }
        if (done <= last_done_ || (phase_ != "phase 1" && phase_ != "phase 2")) return;
        moved_ += done - last_done_;
        last_done_ = done;
        if (disk_) {
            const std::uint64_t per_piece = disk_share_of_progress * disk_piece_bytes;
            disk_->write_pieces(moved_ / per_piece);
            moved_ %= per_piece;
        }
        if (region_) {
            region_->fault(moved_ / progress_per_fault);
            moved_ %= progress_per_fault;
        }
    }

  private:
    std::mutex mu_;  // phase 1's reader thread and its sorting thread both report progress
    std::string phase_;
    std::uint64_t last_done_ = 0;
    std::uint64_t moved_ = 0;  // bytes moved that the needle has not yet slowed
    std::unique_ptr<SlowDisk> disk_;
    std::unique_ptr<PagedRegion> region_;
};

// The node's disk or memory needle while its TestNeedle lives (one node to a process).
std::unique_ptr<Slowdown> slowdown;

}  // namespace

TestNeedle::TestNeedle(int rank, const std::string &scratch) {
    const Kind kind = kind_for(rank);
    if (kind == Kind::cpu) start_hogs();
    if (kind == Kind::disk || kind == Kind::memory)
        slowdown = std::make_unique<Slowdown>(kind, scratch);
}

TestNeedle::~TestNeedle() {
    for (pid_t pid : hogs_) kill(pid, SIGKILL);
    for (pid_t pid : hogs_)
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    slowdown.reset();
}

void TestNeedle::start_hogs() {
    const pid_t node = getpid();
    // Eight for each CPU the node may run on (the children inherit them): the scheduler shares
    // a CPU by thread, and the node's few busy threads then keep a third of it or less.
    cpu_set_t mine;
    CPU_ZERO(&mine);
    const long cpus = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine)
                                                                    : sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < 8 * std::max(1L, cpus); ++i) {
        const pid_t pid = fork();
        if (pid == 0) hog(node);
        if (pid > 0) hogs_.push_back(pid);
    }
}

void test_needle_progress(const char *phase, std::uint64_t done) {
    if (slowdown) slowdown->progress(phase, done);
}

}  // namespace sortapp::cluster
