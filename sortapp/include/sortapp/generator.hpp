// sortgen's record generator: record i is a pure function of (format, distribution, seed, i),
// so any range of records can be produced independently (by any node, in any order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "sortapp/checksum.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"

namespace sortapp {

enum class Distribution { uniform, skewed, equal, few, sorted, reverse };

const char *distribution_name(Distribution d);
Status parse_distribution(const std::string &name, Distribution &out);
extern const Distribution all_distributions[6];

struct GeneratorSpec {
    RecordFormat format;
    Distribution distribution = Distribution::uniform;
    std::uint64_t seed = 0;
};

// Writes record `index` into out[0, format.record_size).
void generate_record(const GeneratorSpec &spec, std::uint64_t index, std::uint8_t *out);

// Records [first, first + count) into out; returns their checksum.
Checksum generate_records(const GeneratorSpec &spec, std::uint64_t first, std::uint64_t count,
                          std::uint8_t *out);

// The record number carried in a generated record's payload, or false if the payload does not
// hold one (a record not written by sortgen, or too small a payload).
bool record_number_of(const RecordFormat &format, const std::uint8_t *record, std::uint64_t &out);

// Records written so far by one generate_file call (for a progress line).
using GenerateProgress = std::function<void(std::uint64_t records_written)>;

// Writes records [first, first + count) to path (created or truncated) using `threads` threads.
Status generate_file(const GeneratorSpec &spec, const std::string &path, std::uint64_t first,
                     std::uint64_t count, Checksum &checksum,
                     const GenerateProgress &progress = {});

}  // namespace sortapp
