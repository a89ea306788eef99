// river's C API: argument checks and the entry points that hand each call to
// the source or sink end, statistics and status text.
#include <algorithm>
#include <cstring>

#include "handle.hpp"
#include "lifecycle.hpp"

extern "C" void river_options_init(river_options_t *o) {
    if (o == nullptr) return;
    *o = river_options_t{};
    o->batch_size = size_t{256} << 10;
    o->credits = 4;
    o->tag = RIVER_TAG_DEFAULT;
}

extern "C" int river_open(msg_context_t *msg, const river_options_t *options, river_t **out) {
    if (msg == nullptr || options == nullptr || out == nullptr) return MSG_ERR_INVALID_ARG;
    *out = nullptr;
    return riv::open_river(msg, *options, out);
}

extern "C" int river_close(river_t *r) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return riv::close_river(std::unique_ptr<river>(r));
}

extern "C" int river_role(const river_t *r, int *source_index, int *sink_index) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (source_index != nullptr) *source_index = r->core.settings.layout.my_source;
    if (sink_index != nullptr) *sink_index = r->core.settings.layout.my_sink;
    return RIVER_OK;
}

// ---- sources ----

extern "C" int river_put(river_t *r, const void *record) {
    if (r == nullptr || record == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->put(record, true);
}

extern "C" int river_try_put(river_t *r, const void *record) {
    if (r == nullptr || record == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->put(record, false);
}

extern "C" int river_put_records(river_t *r, const void *records, size_t count) {
    if (r == nullptr || (records == nullptr && count != 0)) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->put_records(static_cast<const uint8_t *>(records), count);
}

extern "C" int river_put_to(river_t *r, int sink, const void *records, size_t count) {
    if (r == nullptr || (records == nullptr && count != 0)) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->put_to(sink, static_cast<const uint8_t *>(records), count);
}

extern "C" int river_flush(river_t *r) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->flush();
}

extern "C" int river_end(river_t *r) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->source) return RIVER_ERR_NOT_SOURCE;
    return r->source->end();
}

// ---- sinks ----

extern "C" int river_get_batch(river_t *r, river_batch_t *batch, int timeout_ms) {
    if (r == nullptr || batch == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->sink) return RIVER_ERR_NOT_SINK;
    return r->sink->get_batch(batch, timeout_ms);
}

extern "C" int river_release(river_t *r, river_batch_t *batch) {
    if (r == nullptr || batch == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->sink) return RIVER_ERR_NOT_SINK;
    return r->sink->release(batch);
}

extern "C" int river_get(river_t *r, void *record) {
    if (r == nullptr || record == nullptr) return MSG_ERR_INVALID_ARG;
    if (!r->sink) return RIVER_ERR_NOT_SINK;
    return r->sink->get(record);
}

// ---- statistics, errors and status text ----

extern "C" int river_get_stats(const river_t *r, river_stats_t *stats) {
    if (r == nullptr || stats == nullptr) return MSG_ERR_INVALID_ARG;
    riv::Core &core = const_cast<river_t *>(r)->core;
    const riv::Settings &st = core.settings;
    {
        std::lock_guard<std::mutex> lk(core.mu);
        *stats = core.counters.s;
    }
    if (r->source) {
        stats->records_put = r->source->records_put();
        stats->bytes_put = stats->records_put * st.record_size;
        stats->source_bytes_bound =
            st.layout.sinks.size() * static_cast<uint64_t>(st.credits + 1) * st.slot_bytes;
    }
    return RIVER_OK;
}

extern "C" int river_error(const river_t *r, int *rank, char *text, size_t capacity) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    riv::Core &core = const_cast<river_t *>(r)->core;
    std::lock_guard<std::mutex> lk(core.mu);
    if (rank != nullptr) *rank = core.error_rank;
    if (text != nullptr && capacity > 0) {
        const size_t n = std::min(capacity - 1, core.error_text.size());
        std::memcpy(text, core.error_text.data(), n);
        text[n] = '\0';
    }
    return core.error();
}

extern "C" const char *river_strerror(int status) {
    switch (status) {
        case RIVER_END:
            return "end of the river: every source has ended";
        case RIVER_ERR_WOULD_BLOCK:
            return "would block: no credit or room now, or nothing arrived in time";
        case RIVER_ERR_BAD_BATCH:
            return "a batch from a source failed validation";
        case RIVER_ERR_PROTOCOL:
            return "a river control message failed validation";
        case RIVER_ERR_MISMATCH:
            return "the ranks of the river opened it with different settings";
        case RIVER_ERR_SOURCE_ABORTED:
            return "a source closed the river without ending its flow";
        case RIVER_ERR_SINK_CLOSED:
            return "a sink closed the river before the flow ended";
        case RIVER_ERR_ENDED:
            return "the source has already ended its flow";
        case RIVER_ERR_NOT_SOURCE:
            return "this rank is not a source of the river";
        case RIVER_ERR_NOT_SINK:
            return "this rank is not a sink of the river";
        case RIVER_ERR_PICK:
            return "the pick function chose no valid sink";
        case RIVER_ERR_TIMEOUT:
            return "gave up on a peer of the river that sent nothing for the timeout";
        default:
            return msg_strerror(status);
    }
}
