// Memory registrations shared and kept: a buffer covered by a live or
// recently released registration is not registered again, so repeated long
// messages from and into the same buffers cost one ibv_reg_mr. A released
// registration is kept only while an UnmapMonitor watches its pages: once
// they are unmapped, moved or discarded it is never served again.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>

#include "common/unmap_monitor.hpp"
#include "transport/transport.hpp"

namespace msg {

class RegistrationCache {
  public:
    struct Entry {
        ibv_mr *mr = nullptr;
        uintptr_t begin = 0, end = 0;
        bool remote_read = false;
        bool remote_write = false;
        bool writable = true;  // false: read-only memory, registered without LOCAL_WRITE
        int users = 0;
        bool watched = false;  // the monitor reports its pages changing
        bool stale = false;    // its pages changed: never serve it again
    };

    // idle_entries: how many released registrations to keep (0: none). They
    // are kept only if the unmap monitor can start; otherwise none are.
    RegistrationCache(ibv_pd *pd, size_t idle_entries, size_t idle_bytes);
    ~RegistrationCache();
    RegistrationCache(const RegistrationCache &) = delete;
    RegistrationCache &operator=(const RegistrationCache &) = delete;

    // 0, or a negative errno from ibv_reg_mr.
    int acquire(const void *addr, size_t len, unsigned access, std::unique_ptr<MemoryRegion> *out);
    void release(Entry *e);

    uint64_t registrations() const { return registrations_; }
    uint64_t hits() const { return hits_; }
    size_t idle_limit() const { return idle_entries_; }

  private:
    void trim();
    // Marks entries whose pages the monitor saw change; drops idle ones.
    void forget_changed();

    ibv_pd *pd_;
    size_t idle_entries_, idle_bytes_;
    std::unique_ptr<UnmapMonitor> monitor_;
    std::list<Entry> entries_;  // most recently used first
    uint64_t registrations_ = 0, hits_ = 0;
};

}  // namespace msg
