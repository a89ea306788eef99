// AlphaSort's key-prefix sort: records stay where they were read; (key prefix, index) pairs are
// sorted instead, by an MSD radix sort whose first digit is spread over all threads (NOW-Sort's
// buckets) and whose buckets are then radix-sorted while cache resident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sortapp/record_format.hpp"

namespace sortapp {

// hi: key bytes 0-7 big-endian. lo: key bytes 8 and 9 in the top 16 bits, the record's index
// in the low 48. Comparing (hi, lo) as integers orders by the first 10 key bytes, then by index.
struct SortEntry {
    std::uint64_t hi;
    std::uint64_t lo;
};

inline constexpr std::uint64_t entry_index_mask = (std::uint64_t{1} << 48) - 1;
inline constexpr std::uint64_t max_records_per_sort = entry_index_mask;

inline std::uint64_t entry_index(const SortEntry &e) {
    return e.lo & entry_index_mask;
}

// Fills entries[i] for records[i], i < count, using `threads` threads.
void make_entries(const RecordFormat &format, const std::uint8_t *records, std::size_t count,
                  SortEntry *entries, unsigned threads);
// Fills entries[i] for i in [begin, end) only (as parts of the records arrive).
void make_entries_range(const RecordFormat &format, const std::uint8_t *records, std::size_t begin,
                        std::size_t end, SortEntry *entries);
// Fills entries[k] for the record in slot first + k of records, k < n: for records that landed
// apart from their entries' order (the river sort's placed batches). Each entry's index is its
// record's slot.
void make_entries_at(const RecordFormat &format, const std::uint8_t *records, std::size_t first,
                     std::size_t n, SortEntry *entries);

// Sorts entries[0, count) by key (ties in key order by index); scratch holds count entries.
// Keys longer than 10 bytes are finished with a comparison of the full keys wherever the
// first 10 bytes tie.
void sort_entries(const RecordFormat &format, const std::uint8_t *records, SortEntry *entries,
                  SortEntry *scratch, std::size_t count, unsigned threads);

// The same sort in two stages, so that writing can start before the sort ends: partition()
// scatters the entries by their top digit (all threads); sort_bucket(b) then finishes bucket b
// in place. Buckets are in key order: once buckets 0..b are sorted, entries [0, end(b)) are final.
class StagedKeySort {
  public:
    StagedKeySort(const RecordFormat &format, const std::uint8_t *records, SortEntry *entries,
                  SortEntry *scratch, std::size_t count);
    void partition(unsigned threads);
    std::size_t buckets() const { return start_.size() - 1; }
    std::size_t end(std::size_t bucket) const { return start_[bucket + 1]; }
    void sort_bucket(std::size_t bucket);

  private:
    RecordFormat format_;
    const std::uint8_t *records_;
    SortEntry *entries_, *scratch_;
    std::size_t count_;
    unsigned kbits_ = 0, p_ = 0;  // key bits; bits the buckets already account for
    bool scattered_ = false;      // buckets are in scratch_ (else one bucket, in entries_)
    std::vector<std::size_t> start_;
};

}  // namespace sortapp
