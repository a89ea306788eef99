// The registration table's slots: a free list kept here, the entries in the
// region, each published key last and withdrawn key first.
#include "transport/shm/registrations.hpp"

namespace msg {

ShmRegistrationTable::ShmRegistrationTable(std::shared_ptr<ShmRegion> region)
    : region_(std::move(region)) {
    for (size_t i = kShmRegistrations; i-- > 0;) free_.push_back(i);
}

uint64_t ShmRegistrationTable::add(const void *addr, size_t len, unsigned access) {
    std::lock_guard<std::mutex> lk(mu_);
    if (free_.empty()) return 0;
    const size_t slot = free_.back();
    free_.pop_back();
    // The generation makes a stale key (its slot since reused) miss.
    const uint64_t key = (++generation_) * kShmRegistrations + slot;
    ShmRegistration &e = region_->registration(slot);
    e.base.store(reinterpret_cast<uint64_t>(addr), std::memory_order_relaxed);
    e.len.store(len, std::memory_order_relaxed);
    e.access.store(access, std::memory_order_relaxed);
    e.key.store(key, std::memory_order_release);
    return key;
}

void ShmRegistrationTable::remove(uint64_t key) {
    std::lock_guard<std::mutex> lk(mu_);
    const size_t slot = shm_registration_slot(key);
    ShmRegistration &e = region_->registration(slot);
    if (e.key.load(std::memory_order_relaxed) != key) return;
    e.key.store(0, std::memory_order_release);
    free_.push_back(slot);
}

bool shm_registration_covers(const ShmRegion &region, uint64_t key, uint64_t remote, size_t len,
                             unsigned access) {
    if (key == 0) return false;
    const ShmRegistration &e = region.registration(shm_registration_slot(key));
    if (e.key.load(std::memory_order_acquire) != key) return false;
    const uint64_t base = e.base.load(std::memory_order_relaxed);
    const uint64_t size = e.len.load(std::memory_order_relaxed);
    const uint64_t allowed = e.access.load(std::memory_order_relaxed);
    // Written so that no sum can wrap.
    return (allowed & access) == access && remote >= base && len <= size &&
           remote - base <= size - len;
}

}  // namespace msg
