// The k-way merge of phase 2 and phase 3b: a loser tree over record streams picks the smallest
// current record, which goes to the writer, until every stream is exhausted.
#pragma once

#include <cstdint>
#include <functional>

#include "sortapp/record_stream.hpp"
#include "sortapp/sequential_writer.hpp"

namespace sortapp {

// Merges `streams` (started: see start_streams) into `writer` in key order; records with equal
// keys leave in stream order. `merged` counts the bytes appended. Whenever another
// `report_every` bytes have been appended, `progress` (may be empty) sees `merged`. The writer
// is not finished here.
Status merge_streams(const RecordFormat &format, const RecordStreams &streams,
                     SequentialWriter &writer, std::uint64_t report_every,
                     const std::function<void(std::uint64_t)> &progress, std::uint64_t &merged);

}  // namespace sortapp
