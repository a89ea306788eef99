// Checking river_options_t: sizes, ranks, tags and the built-in pick
// functions' arguments; the layout every hello carries.
#include "settings.hpp"

#include <cstring>

namespace riv {

namespace {

constexpr size_t kMaxBatchBytes = size_t{1} << 30;
constexpr int kMaxCredits = 1024;
constexpr int kDefaultTimeoutMs = 60000;

// ranks (NULL: every rank) into `out` with the index of each rank in `index_of`.
bool members(const int *ranks, int n, int size, std::vector<int> *out, std::vector<int> *index_of) {
    index_of->assign(static_cast<size_t>(size), -1);
    if (ranks == nullptr) {
        if (n != 0) return false;
        for (int r = 0; r < size; ++r) out->push_back(r);
    } else {
        if (n < 1) return false;
        out->assign(ranks, ranks + n);
    }
    for (size_t i = 0; i < out->size(); ++i) {
        const int r = (*out)[i];
        if (r < 0 || r >= size || (*index_of)[static_cast<size_t>(r)] != -1) return false;
        (*index_of)[static_cast<size_t>(r)] = static_cast<int>(i);
    }
    return true;
}

bool key_inside(size_t key_offset, size_t key_len, size_t record_size) {
    return key_len != 0 && key_offset <= record_size && key_len <= record_size - key_offset;
}

bool pick_valid(const river_options_t &o, size_t nsinks) {
    if (o.pick == river_pick_hash && o.pick_arg != nullptr) {
        const auto *h = static_cast<const river_hash_t *>(o.pick_arg);
        return key_inside(h->key_offset, h->key_len, o.record_size);
    }
    if (o.pick != river_pick_range) return true;
    const auto *r = static_cast<const river_range_t *>(o.pick_arg);
    if (r == nullptr || !key_inside(r->key_offset, r->key_len, o.record_size)) return false;
    if (nsinks == 1) return true;
    if (r->splitters == nullptr) return false;
    const auto *s = static_cast<const unsigned char *>(r->splitters);
    for (size_t i = 1; i + 1 < nsinks; ++i)
        if (std::memcmp(s + (i - 1) * r->key_len, s + i * r->key_len, r->key_len) > 0) return false;
    return true;
}

uint64_t mix(uint64_t h, uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t layout_hash(const Layout &l, int tag) {
    uint64_t h = mix(1469598103934665603ull, static_cast<uint64_t>(tag));
    h = mix(h, l.sources.size());
    for (int r : l.sources) h = mix(h, static_cast<uint64_t>(r));
    h = mix(h, l.sinks.size());
    for (int r : l.sinks) h = mix(h, static_cast<uint64_t>(r));
    return h;
}

}  // namespace

int make_settings(const river_options_t &o, int rank, int size, Settings *out) {
    if (o.record_size == 0 || o.record_size > kMaxBatchBytes || o.batch_size == 0) {
        return MSG_ERR_INVALID_ARG;
    }
    if (o.credits < 1 || o.credits > kMaxCredits || o.timeout_ms < 0) return MSG_ERR_INVALID_ARG;
    // The river's tags are the application's: below libmsg's reserved range.
    if (o.tag < 0 || o.tag > MSG_TAG_USER_MAX - (RIVER_TAGS - 1)) return MSG_ERR_INVALID_ARG;
    Settings s;
    Layout &l = s.layout;
    if (!members(o.sources, o.nsources, size, &l.sources, &l.source_of_rank) ||
        !members(o.sinks, o.nsinks, size, &l.sinks, &l.sink_of_rank))
        return MSG_ERR_INVALID_ARG;
    if (!pick_valid(o, l.sinks.size())) return MSG_ERR_INVALID_ARG;
    l.my_source = l.source_of_rank[static_cast<size_t>(rank)];
    l.my_sink = l.sink_of_rank[static_cast<size_t>(rank)];
    l.hash = layout_hash(l, o.tag);
    s.record_size = o.record_size;
    s.batch_records = o.batch_size >= o.record_size ? o.batch_size / o.record_size : 1;
    if (s.batch_records > kMaxBatchBytes / o.record_size)
        s.batch_records = kMaxBatchBytes / o.record_size;
    if (s.batch_records == 0) s.batch_records = 1;
    s.batch_bytes = s.batch_records * s.record_size;
    s.slot_bytes = s.batch_bytes + sizeof(BatchTrailer);
    s.credits = o.credits;
    s.tag = o.tag;
    s.timeout_ms = o.timeout_ms == 0 ? kDefaultTimeoutMs : o.timeout_ms;
    s.pick = o.pick != nullptr ? o.pick : river_pick_hash;
    s.pick_arg = o.pick != nullptr ? o.pick_arg : nullptr;
    s.place = o.place;
    s.place_arg = o.place_arg;
    *out = std::move(s);
    return RIVER_OK;
}

}  // namespace riv
