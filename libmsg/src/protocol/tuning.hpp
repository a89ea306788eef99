// A protocol table measured on this host by msg-tune, which VIADUCT_PROTOCOL=auto uses in
// place of the built-in one (protocol_choice.hpp). The file is another process's output, so
// every byte of it is checked: a file that is not the user's own (or root's), that others may
// write, that is not a regular file or is too large, or that does not parse into ascending
// ranges of known protocols ending at SIZE_MAX, is ignored with a warning.
//
// The file, one JSON object:
//   {"format": "viaduct-libmsg-tuning", "version": 1,
//    "tables": [{"host": "node7", "provider": "shm", "mode": "unrestricted",
//                "ranges": [[4194304, "rdma"], [null, "rdma-write"]],
//                "measured_at": "2026-11-27T20:01:02Z", "conditions": {...},
//                "figures": [...]}, ...]}
// "provider" is the provider's first name ("tcp" for "tcp;ofi_rxm"); "ranges" read "up to
// max_bytes, protocol", null being every larger size. Only "format", "version" and each
// table's "host", "provider", "mode" and "ranges" are read; the rest is for people.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "protocol/protocol_choice.hpp"

namespace msg {

inline constexpr const char *kTuningFormat = "viaduct-libmsg-tuning";
inline constexpr int kTuningVersion = 1;
inline constexpr size_t kTuningMaxBytes = 1 << 20;
inline constexpr size_t kTuningMaxRanges = 64;

// Where the tuned tables are read from: VIADUCT_TUNING when set ("none": nowhere), else
// libmsg-tuning.json in the user's cache directory (viaduct/cache_dir.hpp). `explicit_path` is
// set when the variable named it: a missing file is then worth a warning.
std::string tuning_path(bool *explicit_path);

struct TunedTable {
    std::vector<ProtocolChoice::Range> ranges;
    std::string measured_at;
    bool file_found = false;
};

// The table in `text` for this host, provider (first name) and mode. False with *why when the
// text is malformed (then no table of it may be trusted); true with an empty `out.ranges` when
// it is well formed but has no table for these.
bool parse_tuning(const std::string &text, const std::string &host, const std::string &provider,
                  bool restricted, TunedTable &out, std::string *why);

// The file's text, read as load_tuning reads it: no link followed, only a regular file of the
// user's own (or root's) that nobody else may write, at most kTuningMaxBytes. False with *why
// when it is refused; true with `exists` false when there is none.
bool read_tuning_file(const std::string &path, std::string &text, bool &exists, std::string *why);

// obj's member `key`, or null when obj is no object or has none: how every member of a tuning
// file is read (a const json's operator[] on a missing key is undefined, and value() throws on
// another type: neither suits a file another process wrote).
const nlohmann::json *tuning_member(const nlohmann::json &obj, const char *key);

// The file at `path`, read as parse_tuning reads text. False with *why when it exists but is
// refused; true with empty ranges when there is no file or no table for these.
bool load_tuning(const std::string &path, const std::string &host, const std::string &provider,
                 bool restricted, TunedTable &out, std::string *why);

}  // namespace msg
