// The built-in pick-stream functions: range partition by splitters (memcmp on
// a key prefix) and hash partition.
#include <cstring>

#include "river/river.h"

namespace {

bool key_inside(size_t key_offset, size_t key_len, size_t record_size) {
    return key_len != 0 && key_offset <= record_size && key_len <= record_size - key_offset;
}

uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

extern "C" int river_pick_range(void *arg, const void *record, size_t record_size, int nsinks) {
    const auto *range = static_cast<const river_range_t *>(arg);
    if (range == nullptr || record == nullptr || nsinks < 1 ||
        !key_inside(range->key_offset, range->key_len, record_size))
        return RIVER_ERR_PICK;
    if (nsinks > 1 && range->splitters == nullptr) return RIVER_ERR_PICK;
    const auto *key = static_cast<const unsigned char *>(record) + range->key_offset;
    const auto *splitters = static_cast<const unsigned char *>(range->splitters);
    // The number of splitters <= key: sink i holds [splitters[i-1], splitters[i]).
    size_t lo = 0, hi = static_cast<size_t>(nsinks - 1);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (std::memcmp(splitters + mid * range->key_len, key, range->key_len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return static_cast<int>(lo);
}

extern "C" int river_pick_hash(void *arg, const void *record, size_t record_size, int nsinks) {
    if (record == nullptr || nsinks < 1) return RIVER_ERR_PICK;
    const auto *hash = static_cast<const river_hash_t *>(arg);
    size_t offset = 0, len = record_size;
    if (hash != nullptr) {
        if (!key_inside(hash->key_offset, hash->key_len, record_size)) return RIVER_ERR_PICK;
        offset = hash->key_offset;
        len = hash->key_len;
    }
    const uint64_t h = fnv1a(static_cast<const unsigned char *>(record) + offset, len);
    return static_cast<int>(h % static_cast<uint64_t>(nsinks));
}
