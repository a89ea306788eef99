#include "common/unmap_monitor.hpp"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace msg {

namespace {

uintptr_t page_size() {
    static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    return size;
}

}  // namespace

UnmapMonitor::~UnmapMonitor() {
    if (thread_.joinable()) {
        uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
        thread_.join();
    }
    if (uffd_ >= 0) ::close(uffd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
}

bool UnmapMonitor::start(std::string *why) {
    uffd_ = static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    if (uffd_ < 0) {
        *why = std::string("userfaultfd: ") + std::strerror(errno);
        return false;
    }
    uffdio_api api{};
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;
    if (::ioctl(uffd_, UFFDIO_API, &api) != 0) {
        *why = std::string("userfaultfd events unsupported: ") + std::strerror(errno);
        ::close(uffd_);
        uffd_ = -1;
        return false;
    }
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (stop_fd_ < 0) {
        *why = std::string("eventfd: ") + std::strerror(errno);
        return false;
    }
    thread_ = std::thread([this] { run(); });
    return true;
}

bool UnmapMonitor::watch(uintptr_t begin, uintptr_t end) {
    if (uffd_ < 0 || end <= begin) return false;
    uintptr_t mask = page_size() - 1;
    uffdio_register reg{};
    reg.range.start = begin & ~mask;
    reg.range.len = ((end + mask) & ~mask) - reg.range.start;
    // Missing-page mode is the only one every kernel has. The pages are
    // pinned by the registration the caller keeps, so no fault happens there
    // unless they are discarded first, and then the REMOVE event stops the
    // watch (see read_events).
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (::ioctl(uffd_, UFFDIO_REGISTER, &reg) != 0) {
        log_debug("cannot watch %#lx+%llu for unmapping: %s", static_cast<unsigned long>(begin),
                  static_cast<unsigned long long>(reg.range.len), std::strerror(errno));
        return false;
    }
    return true;
}

void UnmapMonitor::unwatch(uintptr_t begin, uintptr_t end) {
    uintptr_t mask = page_size() - 1;
    uffdio_range r{};
    r.start = begin & ~mask;
    r.len = ((end + mask) & ~mask) - r.start;
    // Also wakes any thread waiting on a fault in the range; it then faults
    // the ordinary way. Fails harmlessly where the range is no longer mapped.
    if (r.len != 0) ::ioctl(uffd_, UFFDIO_UNREGISTER, &r);
}

void UnmapMonitor::record(uintptr_t begin, uintptr_t end) {
    events_.fetch_add(1, std::memory_order_relaxed);
    if (count_ == kMaxChanged) {
        overflow_ = true;
        return;
    }
    changed_[count_++] = Range{begin, end};
}

void UnmapMonitor::read_events() {
    uffd_msg msgs[16];
    for (;;) {
        ssize_t n = ::read(uffd_, msgs, sizeof msgs);
        if (n <= 0) return;  // EAGAIN: all read
        for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(uffd_msg); ++i) {
            const uffd_msg &m = msgs[i];
            switch (m.event) {
                case UFFD_EVENT_UNMAP:
                    record(m.arg.remove.start, m.arg.remove.end);
                    break;
                case UFFD_EVENT_REMOVE:
                    // Discarded pages: stop watching them, so that touching
                    // them again faults in fresh pages without us.
                    record(m.arg.remove.start, m.arg.remove.end);
                    unwatch(m.arg.remove.start, m.arg.remove.end);
                    break;
                case UFFD_EVENT_REMAP:
                    record(m.arg.remap.from, m.arg.remap.from + m.arg.remap.len);
                    break;
                case UFFD_EVENT_PAGEFAULT: {
                    // A missing page in a watched range: it was discarded
                    // (the REMOVE event came first). Let the fault through.
                    uintptr_t page = m.arg.pagefault.address & ~(page_size() - 1);
                    record(page, page + page_size());
                    unwatch(page, page + page_size());
                    break;
                }
                default:
                    break;
            }
        }
    }
}

void UnmapMonitor::run() {
    for (;;) {
        pollfd fds[2] = {{uffd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents & POLLIN) return;
        if (fds[0].revents & POLLIN) {
            std::lock_guard<std::mutex> lk(mu_);
            read_events();
        }
        if (fds[0].revents & (POLLERR | POLLHUP)) return;
    }
}

}  // namespace msg
