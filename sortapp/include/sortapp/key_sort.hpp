// AlphaSort's key-prefix sort: records stay where they were read; (key prefix, index) pairs are
// sorted instead, by an MSD radix sort whose first digit is spread over all threads (NOW-Sort's
// buckets) and whose buckets are then radix-sorted while cache resident.
#pragma once

#include <cstddef>
#include <cstdint>

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

inline std::uint64_t entry_index(const SortEntry &e) { return e.lo & entry_index_mask; }

// Fills entries[i] for records[i], i < count, using `threads` threads.
void make_entries(const RecordFormat &format, const std::uint8_t *records, std::size_t count,
                  SortEntry *entries, unsigned threads);

// Sorts entries[0, count) by key (ties in key order by index); scratch holds count entries.
// Keys longer than 10 bytes are finished with a comparison of the full keys wherever the
// first 10 bytes tie.
void sort_entries(const RecordFormat &format, const std::uint8_t *records, SortEntry *entries,
                  SortEntry *scratch, std::size_t count, unsigned threads);

}  // namespace sortapp
