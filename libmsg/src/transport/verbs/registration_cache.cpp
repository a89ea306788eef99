// The verbs registration cache: lookup by covering range and access, reuse
// counted, released registrations kept most-recently-used first up to a
// bound on entries and bytes.
#include "transport/verbs/registration_cache.hpp"

#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace msg {
namespace {

class CachedRegion final : public MemoryRegion {
  public:
    CachedRegion(RegistrationCache *cache, RegistrationCache::Entry *e) : cache_(cache), e_(e) {}
    ~CachedRegion() override { cache_->release(e_); }
    CachedRegion(const CachedRegion &) = delete;
    CachedRegion &operator=(const CachedRegion &) = delete;

    // The verbs transport reads the lkey from the ibv_mr.
    void *desc() const override { return e_->mr; }
    uint64_t remote_key() const override { return e_->mr->rkey; }
    uint64_t remote_address(const void *p) const override { return reinterpret_cast<uint64_t>(p); }

  private:
    RegistrationCache *cache_;
    RegistrationCache::Entry *e_;
};

}  // namespace

RegistrationCache::RegistrationCache(ibv_pd *pd, size_t idle_entries, size_t idle_bytes)
    : pd_(pd), idle_entries_(idle_entries), idle_bytes_(idle_bytes) {
    if (idle_entries_ == 0) return;
    auto monitor = std::make_unique<UnmapMonitor>();
    std::string why;
    if (monitor->start(&why)) {
        monitor_ = std::move(monitor);
    } else {
        log_debug("registrations are not kept after use: %s", why.c_str());
        idle_entries_ = 0;
    }
}

RegistrationCache::~RegistrationCache() {
    for (Entry &e : entries_) {
        if (e.users != 0) log_error("a memory registration is still in use at shutdown");
        ibv_dereg_mr(e.mr);
    }
}

int RegistrationCache::acquire(const void *addr, size_t len, unsigned access,
                               std::unique_ptr<MemoryRegion> *out) {
    // Zero-length registrations are not portable; register one byte instead.
    uintptr_t begin = reinterpret_cast<uintptr_t>(addr), end = begin + (len == 0 ? 1 : len);
    bool remote_read = (access & kRemoteRead) != 0;
    bool remote_write = (access & kRemoteWrite) != 0;
    forget_changed();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (!it->stale && it->begin <= begin && end <= it->end &&
            (it->remote_read || !remote_read) && (it->remote_write || !remote_write)) {
            entries_.splice(entries_.begin(), entries_, it);
            Entry &e = entries_.front();
            ++e.users;
            ++hits_;
            *out = std::make_unique<CachedRegion>(this, &e);
            return 0;
        }
    }
    int flags = IBV_ACCESS_LOCAL_WRITE | (remote_read ? IBV_ACCESS_REMOTE_READ : 0) |
                (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0);
    ibv_mr *mr = ibv_reg_mr(pd_, const_cast<void *>(addr), end - begin, flags);
    bool writable = true;
    if (mr == nullptr && !remote_write && (errno == EFAULT || errno == EACCES || errno == EPERM)) {
        // Read-only memory (a constant send buffer) cannot be pinned for
        // writing; it can still be sent from, written remotely from and read
        // remotely. (Remote write access needs local write access.)
        mr =
            ibv_reg_mr(pd_, const_cast<void *>(addr), end - begin, flags & ~IBV_ACCESS_LOCAL_WRITE);
        writable = false;
    }
    if (mr == nullptr) {
        int err = errno != 0 ? errno : ENOMEM;
        log_error("ibv_reg_mr(%zu bytes) failed: %s", len, std::strerror(err));
        return -err;
    }
    ++registrations_;
    bool watched = monitor_ && monitor_->watch(begin, end);
    entries_.push_front(
        Entry{mr, begin, end, remote_read, remote_write, writable, 1, watched, false});
    *out = std::make_unique<CachedRegion>(this, &entries_.front());
    trim();
    return 0;
}

void RegistrationCache::release(Entry *e) {
    if (--e->users == 0) trim();
}

void RegistrationCache::trim() {
    // Keep the most recently used idle registrations; drop the rest.
    size_t idle = 0, bytes = 0;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->users != 0) {
            ++it;
            continue;
        }
        size_t size = it->end - it->begin;
        if (it->watched && !it->stale && idle < idle_entries_ && bytes + size <= idle_bytes_) {
            ++idle;
            bytes += size;
            ++it;
            continue;
        }
        ibv_dereg_mr(it->mr);
        it = entries_.erase(it);
    }
}

void RegistrationCache::forget_changed() {
    if (!monitor_) return;
    bool any = false;
    // Only mark under the monitor's lock: deregistering frees memory, and a
    // free that unmaps a watched range would wait for the monitor.
    monitor_->drain([&](UnmapMonitor::Range r) {
        for (Entry &e : entries_) {
            if (e.begin < r.end && r.begin < e.end) {
                e.stale = true;
                any = true;
            }
        }
    });
    if (any) trim();
}

}  // namespace msg
