// The in-core sort of (key prefix, index) entries: an MSD radix sort on the first 80 key bits.
// The first digit (up to 12 bits, after the bits every key shares) is histogrammed and scattered
// by all threads; its buckets, sized to fit the cache, are then sorted one per thread at a time
// with 8-bit digits, switching to a comparison sort for small buckets.
#include "sortapp/key_sort.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "sortapp/parallel.hpp"

namespace sortapp {

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::size_t small_bucket = 64;
constexpr unsigned top_digit_bits = 12;

// The first 80 key bits as one integer.
inline u128 key80(const SortEntry &e) {
    return (u128(e.hi) << 16) | (e.lo >> 48);
}

inline unsigned digit(const SortEntry &e, unsigned p, unsigned bits) {
    if (p + bits <= 64) return unsigned(e.hi >> (64 - p - bits)) & ((1u << bits) - 1);
    return unsigned(key80(e) >> (80 - p - bits)) & ((1u << bits) - 1);
}

inline bool entry_less(const SortEntry &a, const SortEntry &b) {
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

// Sorts src[0, n) on key bits [p, kbits); the result ends in src when result_in_src, else in
// dst. The other array is scratch.
void msd(SortEntry *src, SortEntry *dst, std::size_t n, unsigned p, unsigned kbits,
         bool result_in_src) {
    while (true) {
        if (n <= small_bucket || p >= kbits) {
            if (!result_in_src) {
                std::memcpy(static_cast<void *>(dst), src, n * sizeof(SortEntry));
                src = dst;
            }
            std::sort(src, src + n, entry_less);
            return;
        }
        const unsigned bits = std::min(8u, kbits - p);
        std::size_t count[256] = {};
        for (std::size_t i = 0; i < n; ++i) ++count[digit(src[i], p, bits)];
        if (count[digit(src[0], p, bits)] == n) {
            p += bits;  // every key has this digit: look at the next one
            continue;
        }
        std::size_t offset[256];
        std::size_t sum = 0;
        for (unsigned b = 0; b < (1u << bits); ++b) {
            offset[b] = sum;
            sum += count[b];
        }
        for (std::size_t i = 0; i < n; ++i) dst[offset[digit(src[i], p, bits)]++] = src[i];
        std::size_t start = 0;
        for (unsigned b = 0; b < (1u << bits); ++b) {
            if (count[b] > 0)
                msd(dst + start, src + start, count[b], p + bits, kbits, !result_in_src);
            start += count[b];
        }
        return;
    }
}

// Keys longer than 10 bytes: order each group of entries that tie on the first 10 bytes by
// the rest of the key, then by index.
void finish_long_keys(const RecordFormat &format, const std::uint8_t *records, SortEntry *e,
                      std::size_t n) {
    const std::size_t rs = format.record_size, rest = format.key_size - 10;
    auto tail_less = [&](const SortEntry &a, const SortEntry &b) {
        int c = std::memcmp(records + entry_index(a) * rs + 10, records + entry_index(b) * rs + 10,
                            rest);
        return c < 0 || (c == 0 && entry_index(a) < entry_index(b));
    };
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && e[j].hi == e[i].hi && (e[j].lo >> 48) == (e[i].lo >> 48)) ++j;
        if (j - i > 1) std::sort(e + i, e + j, tail_less);
        i = j;
    }
}

}  // namespace

void make_entries_at(const RecordFormat &format, const std::uint8_t *records, std::size_t first,
                     std::size_t n, SortEntry *entries) {
    const std::size_t rs = format.record_size, ks = format.key_size;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = first + k;
        const std::uint8_t *key = records + i * rs;
        std::uint64_t b8 = ks > 8 ? key[8] : 0, b9 = ks > 9 ? key[9] : 0;
        entries[k].hi = key_prefix(key, ks);
        entries[k].lo = (b8 << 56) | (b9 << 48) | std::uint64_t(i);
    }
}

void make_entries_range(const RecordFormat &format, const std::uint8_t *records, std::size_t begin,
                        std::size_t end, SortEntry *entries) {
    if (end > begin) make_entries_at(format, records, begin, end - begin, entries + begin);
}

void make_entries(const RecordFormat &format, const std::uint8_t *records, std::size_t count,
                  SortEntry *entries, unsigned threads) {
    threads = std::max(1u, threads);
    parallel_run(threads, [&](unsigned t) {
        make_entries_range(format, records, count * t / threads, count * (t + 1) / threads,
                           entries);
    });
}

StagedKeySort::StagedKeySort(const RecordFormat &format, const std::uint8_t *records,
                             SortEntry *entries, SortEntry *scratch, std::size_t count)
    : format_(format),
      records_(records),
      entries_(entries),
      scratch_(scratch),
      count_(count),
      kbits_(unsigned(std::min<std::size_t>(format.key_size, 10) * 8)),
      start_{0, count} {}

void StagedKeySort::partition(unsigned threads) {
    const std::size_t n = count_;
    threads = std::max(1u, threads);
    if (n < (std::size_t{1} << 15)) return;  // one bucket: small enough for the cache anyway
    // Skip the leading bits that every key shares (a skewed or narrow key range).
    std::vector<u128> diff(threads, 0);
    const u128 first = key80(entries_[0]);
    parallel_run(threads, [&](unsigned t) {
        u128 d = 0;
        for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
            d |= key80(entries_[i]) ^ first;
        }
        diff[t] = d;
    });
    u128 all = 0;
    for (u128 d : diff) all |= d;
    unsigned p0 = 0;
    while (p0 < kbits_ && ((all >> (79 - p0)) & 1) == 0) ++p0;
    p_ = p0;
    if (p0 >= kbits_) return;  // one key: the bucket sorts by index
    const unsigned bits = std::min(top_digit_bits, kbits_ - p0);
    const std::size_t buckets = std::size_t{1} << bits;
    std::vector<std::vector<std::size_t>> hist(threads, std::vector<std::size_t>(buckets));
    parallel_run(threads, [&](unsigned t) {
        auto &h = hist[t];
        for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
            ++h[digit(entries_[i], p0, bits)];
        }
    });
    start_.assign(buckets + 1, 0);
    std::vector<std::vector<std::size_t>> next(threads, std::vector<std::size_t>(buckets));
    std::size_t sum = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
        start_[b] = sum;
        for (unsigned t = 0; t < threads; ++t) {
            next[t][b] = sum;
            sum += hist[t][b];
        }
    }
    start_[buckets] = sum;
    parallel_run(threads, [&](unsigned t) {
        auto &pos = next[t];
        for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
            scratch_[pos[digit(entries_[i], p0, bits)]++] = entries_[i];
        }
    });
    p_ = p0 + bits;
    scattered_ = true;
}

void StagedKeySort::sort_bucket(std::size_t b) {
    const std::size_t s = start_[b], c = start_[b + 1] - s;
    if (c == 0) return;
    if (scattered_)
        msd(scratch_ + s, entries_ + s, c, p_, kbits_, false);
    else
        msd(entries_ + s, scratch_ + s, c, p_, kbits_, true);
    if (format_.key_size > 10) finish_long_keys(format_, records_, entries_ + s, c);
}

void sort_entries(const RecordFormat &format, const std::uint8_t *records, SortEntry *entries,
                  SortEntry *scratch, std::size_t n, unsigned threads) {
    StagedKeySort sort(format, records, entries, scratch, n);
    sort.partition(threads);
    const std::size_t buckets = sort.buckets();
    // Largest buckets first, so one thread is not left with a big one at the end.
    std::vector<std::size_t> order(buckets);
    std::iota(order.begin(), order.end(), 0);
    auto size = [&](std::size_t b) { return sort.end(b) - (b == 0 ? 0 : sort.end(b - 1)); };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return size(a) > size(b); });
    std::atomic<std::size_t> claimed{0};
    parallel_run(buckets > 1 ? std::max(1u, threads) : 1u, [&](unsigned) {
        for (std::size_t k; (k = claimed.fetch_add(1)) < buckets;) sort.sort_bucket(order[k]);
    });
}

}  // namespace sortapp
