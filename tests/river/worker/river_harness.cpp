// Records, checksums and bounds shared by the river scenarios.
#include "river_harness.hpp"

#include <cstdlib>
#include <cstring>

namespace rivertest {

namespace {

uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

uint64_t check_of(uint64_t key, uint32_t source, uint64_t seq) {
    return mix64(key ^ mix64(seq) ^ (static_cast<uint64_t>(source) << 48));
}

}  // namespace

void make_record(uint8_t *rec, size_t size, int source, uint64_t seq) {
    const uint64_t key = mix64((static_cast<uint64_t>(source) << 40) ^ seq);
    for (int i = 0; i < 8; ++i) rec[i] = static_cast<uint8_t>(key >> (56 - 8 * i));
    const auto src = static_cast<uint32_t>(source);
    const uint64_t check = check_of(key, src, seq);
    std::memcpy(rec + 8, &src, 4);
    std::memcpy(rec + 12, &seq, 8);
    std::memcpy(rec + 20, &check, 8);
    for (size_t i = 28; i < size; ++i) rec[i] = static_cast<uint8_t>(seq + i);
}

const char *check_record(const uint8_t *rec, size_t size, int *source, uint64_t *seq) {
    uint64_t key = 0, check;
    uint32_t src;
    for (int i = 0; i < 8; ++i) key = (key << 8) | rec[i];
    std::memcpy(&src, rec + 8, 4);
    std::memcpy(seq, rec + 12, 8);
    std::memcpy(&check, rec + 20, 8);
    *source = static_cast<int>(src);
    if (check != check_of(key, src, *seq)) return "check word does not match";
    if (key != mix64((static_cast<uint64_t>(src) << 40) ^ *seq)) return "key does not match";
    for (size_t i = 28; i < size; ++i)
        if (rec[i] != static_cast<uint8_t>(*seq + i)) return "filler damaged";
    return nullptr;
}

void Checksum::add(const uint8_t *rec, size_t size) {
    const uint64_t h = fnv1a(rec, size);
    ++count;
    sum += h;
    x ^= h;
}

void send_checksum(msg_context_t *ctx, int dest, const Checksum &c) {
    const uint64_t words[3] = {c.count, c.sum, c.x};
    WSTATUS(msg_send(ctx, dest, kTagChecksum, words, sizeof words), MSG_OK);
}

Checksum recv_checksum(msg_context_t *ctx, int source) {
    uint64_t words[3];
    msg_completion_t c{};
    WSTATUS(msg_recv(ctx, source, kTagChecksum, words, sizeof words, &c), MSG_OK);
    WCHECK(c.bytes == sizeof words, "checksum message of %zu bytes", c.bytes);
    return Checksum{words[0], words[1], words[2]};
}

river_options_t options(size_t record_size, size_t batch_size, int credits) {
    river_options_t o;
    river_options_init(&o);
    o.record_size = record_size;
    o.batch_size = batch_size;
    o.credits = credits;
    o.timeout_ms = 20000 * worker::slowdown();
    return o;
}

std::vector<uint8_t> even_splitters(int nsinks) {
    std::vector<uint8_t> s;
    for (int i = 1; i < nsinks; ++i) {
        const uint64_t key =
            (~uint64_t{0} / static_cast<uint64_t>(nsinks)) * static_cast<uint64_t>(i);
        for (int b = 0; b < 8; ++b) s.push_back(static_cast<uint8_t>(key >> (56 - 8 * b)));
    }
    return s;
}

void check_bounds(river_t *river, int credits, size_t nsources) {
    river_stats_t s;
    VSTATUS(river_get_stats(river, &s), RIVER_OK);
    WCHECK(s.peak_in_flight <= static_cast<uint64_t>(credits),
           "%llu batches in flight to one sink, credits %d",
           static_cast<unsigned long long>(s.peak_in_flight), credits);
    WCHECK(s.peak_source_bytes <= s.source_bytes_bound, "source held %llu bytes, bound %llu",
           static_cast<unsigned long long>(s.peak_source_bytes),
           static_cast<unsigned long long>(s.source_bytes_bound));
    WCHECK(s.peak_sink_batches <= nsources * static_cast<uint64_t>(credits),
           "sink held %llu batches, bound %zu",
           static_cast<unsigned long long>(s.peak_sink_batches),
           nsources * static_cast<size_t>(credits));
}

std::string describe_error(river_t *river) {
    char text[512];
    int rank = -1;
    const int rc = river_error(river, &rank, text, sizeof text);
    return std::string(river_strerror(rc)) + " (rank " + std::to_string(rank) + "): " + text;
}

double failure_bound_seconds() {
    const char *v = std::getenv("VIADUCT_TIMEOUT_MS");
    return 2.0 * (v != nullptr ? std::atof(v) : 10000.0) / 1000.0 + 10.0 * worker::slowdown();
}

}  // namespace rivertest
