// sortcheck's validator: record count, order, duplicate keys and checksum of one file, as a
// summary that can be combined with the summaries of the files that follow it in node order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sortapp/checksum.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"

namespace sortapp {

struct Summary {
    std::uint64_t records = 0;
    // Index (0-based, over the whole sequence) of the first record whose key is smaller than
    // the key before it; empty when everything is in order.
    std::optional<std::uint64_t> first_unordered;
    std::uint64_t unordered = 0;       // how many records are smaller than their predecessor
    std::uint64_t duplicate_keys = 0;  // records whose key equals the previous record's key
    Checksum checksum;
    std::vector<std::uint8_t> first_key;  // empty when records == 0
    std::vector<std::uint8_t> last_key;

    bool sorted() const { return !first_unordered.has_value(); }

    // Appends `next` (the summary of what follows this one): counts and checksums add,
    // and the boundary between the two is checked for order and duplicates.
    void append(const Summary &next);

    // A one-line text form for files written by `sortcheck --summary-out`.
    std::string to_text() const;
    static Status from_text(const std::string &text, Summary &out);
    std::string to_json() const;
};

// Streaming validator: feed records in order.
class Validator {
  public:
    explicit Validator(const RecordFormat &format) : format_(format) {}
    void add(const std::uint8_t *records, std::size_t count);
    const Summary &summary() const { return summary_; }

  private:
    RecordFormat format_;
    Summary summary_;
};

// Bytes read so far by one validate_file call (for a progress line).
using ValidateProgress = std::function<void(std::uint64_t bytes_read)>;

Status validate_file(const RecordFormat &format, const std::string &path, Summary &out,
                     const ValidateProgress &progress = {});

}  // namespace sortapp
