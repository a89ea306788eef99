// Record generation. Every byte of record i comes from a hash of (seed, i), so a record can be
// made without its neighbours. The payload follows gensort's binary layout where it fits:
// 0x00 0x11, the record number in 32 hex digits, 0x88 0x99 0xAA 0xBB, filler of hex digits in
// groups of four, 0xCC 0xDD 0xEE 0xFF.
#include "sortapp/generator.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <vector>

#include "sortapp/cleanup.hpp"
#include "sortapp/pending_file.hpp"

namespace sortapp {

const Distribution all_distributions[6] = {Distribution::uniform, Distribution::skewed,
                                           Distribution::equal,   Distribution::few,
                                           Distribution::sorted,  Distribution::reverse};

const char *distribution_name(Distribution d) {
    switch (d) {
        case Distribution::uniform:
            return "uniform";
        case Distribution::skewed:
            return "skewed";
        case Distribution::equal:
            return "equal";
        case Distribution::few:
            return "few";
        case Distribution::sorted:
            return "sorted";
        case Distribution::reverse:
            return "reverse";
    }
    return "?";
}

Status parse_distribution(const std::string &name, Distribution &out) {
    for (Distribution d : all_distributions) {
        if (name == distribution_name(d)) {
            out = d;
            return Status::ok();
        }
    }
    return Status::error("unknown distribution '" + name +
                         "' (uniform, skewed, equal, few, sorted, reverse)");
}

namespace {

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

// Word w of the random stream of record i.
std::uint64_t random_word(std::uint64_t seed, std::uint64_t i, std::uint64_t w) {
    return mix(mix(i ^ mix(seed + 0x9e3779b97f4a7c15ull)) + w * 0xd1b54a32d192ed03ull);
}

void fill_random(std::uint8_t *out, std::size_t n, std::uint64_t seed, std::uint64_t i,
                 std::uint64_t first_word) {
    for (std::size_t pos = 0, w = first_word; pos < n; pos += 8, ++w) {
        std::uint64_t r = random_word(seed, i, w);
        for (std::size_t b = 0; b < 8 && pos + b < n; ++b)
            out[pos + b] = std::uint8_t(r >> (56 - 8 * b));
    }
}

// Writes v big-endian into the last min(8, n) bytes of out[0, n), zeros before.
void put_big_endian_tail(std::uint8_t *out, std::size_t n, std::uint64_t v) {
    std::fill(out, out + n, 0);
    for (std::size_t b = 0; b < std::min<std::size_t>(8, n); ++b) {
        out[n - 1 - b] = std::uint8_t(v >> (8 * b));
    }
}

constexpr char hex_digits[] = "0123456789ABCDEF";
constexpr std::size_t full_payload = 2 + 32 + 4 + 4;  // markers and record number, no filler

void make_key(const GeneratorSpec &spec, std::uint64_t i, std::uint8_t *key) {
    const std::size_t k = spec.format.key_size;
    switch (spec.distribution) {
        case Distribution::uniform:
            fill_random(key, k, spec.seed, i, 0);
            break;
        case Distribution::skewed: {
            // A Pareto-like value (P(v >= x) ~ 1/x) in the leading 4 bytes: half the keys start
            // 00 00 00 00, a sixth 00 00 00 01, ... and the rest of the key is random.
            fill_random(key, k, spec.seed, i, 0);
            double u = double(random_word(spec.seed, i, 99) >> 11) * 0x1.0p-53;
            double x = 1.0 / (1.0 - u) - 1.0;
            std::uint64_t v = x >= 4294967295.0 ? 0xffffffffull : std::uint64_t(x);
            for (std::size_t b = 0; b < std::min<std::size_t>(4, k); ++b) {
                key[b] = std::uint8_t(v >> (24 - 8 * b));
            }
            break;
        }
        case Distribution::equal:
            std::fill(key, key + k, std::uint8_t{0x5a});
            break;
        case Distribution::few: {
            std::uint64_t which = random_word(spec.seed, i, 0) % 7;
            fill_random(key, k, spec.seed ^ 0x5bd1e995ull, which, 1000);
            break;
        }
        case Distribution::sorted:
            put_big_endian_tail(key, k, i);
            break;
        case Distribution::reverse:
            put_big_endian_tail(key, k, ~i);
            break;
    }
}

}  // namespace

void generate_record(const GeneratorSpec &spec, std::uint64_t index, std::uint8_t *out) {
    const std::size_t k = spec.format.key_size;
    const std::size_t payload = spec.format.record_size - k;
    make_key(spec, index, out);
    std::uint8_t *p = out + k;
    if (payload >= full_payload) {
        p[0] = 0x00;
        p[1] = 0x11;
        for (int d = 0; d < 32; ++d) {
            // The upper 16 digits are always 0: record numbers are 64-bit.
            p[2 + d] = std::uint8_t(d < 16 ? '0' : hex_digits[(index >> (4 * (31 - d))) & 0xf]);
        }
        p[34] = 0x88, p[35] = 0x99, p[36] = 0xaa, p[37] = 0xbb;
        std::size_t filler = payload - full_payload;
        std::uint64_t r = random_word(spec.seed, index, 50);
        for (std::size_t f = 0; f < filler; ++f) {
            p[38 + f] = std::uint8_t(hex_digits[(r >> (4 * ((f / 4) % 16))) & 0xf]);
        }
        p[payload - 4] = 0xcc, p[payload - 3] = 0xdd, p[payload - 2] = 0xee, p[payload - 1] = 0xff;
    } else {
        put_big_endian_tail(p, std::min<std::size_t>(payload, 8), index);
        for (std::size_t f = 8; f < payload; ++f) p[f] = std::uint8_t(hex_digits[f % 16]);
    }
}

bool record_number_of(const RecordFormat &format, const std::uint8_t *record, std::uint64_t &out) {
    const std::size_t payload = format.record_size - format.key_size;
    const std::uint8_t *p = record + format.key_size;
    if (payload >= full_payload) {
        if (p[0] != 0x00 || p[1] != 0x11 || p[34] != 0x88 || p[35] != 0x99) return false;
        std::uint64_t v = 0;
        for (int d = 16; d < 32; ++d) {
            char c = char(p[2 + d]);
            int x = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
            if (x < 0) return false;
            v = (v << 4) | std::uint64_t(x);
        }
        out = v;
        return true;
    }
    if (payload < 8) return false;
    std::uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v = (v << 8) | p[b];
    out = v;
    return true;
}

Checksum generate_records(const GeneratorSpec &spec, std::uint64_t first, std::uint64_t count,
                          std::uint8_t *out) {
    Checksum sum;
    const std::size_t rs = spec.format.record_size;
    for (std::uint64_t j = 0; j < count; ++j) {
        generate_record(spec, first + j, out + j * rs);
        sum.add(record_crc32(out + j * rs, rs));
    }
    return sum;
}

Status generate_file(const GeneratorSpec &spec, const std::string &path, std::uint64_t first,
                     std::uint64_t count, Checksum &checksum, const GenerateProgress &progress) {
    SORTAPP_TRY(spec.format.validate());
    // Written under a temporary name and renamed into place when complete: a half-generated
    // file never looks like an input, and nothing is written through a planted link.
    PendingFile out;
    SORTAPP_TRY(out.create(path, false, "gen"));
    const int fd = out.file.fd();
    const std::size_t rs = spec.format.record_size;
    const std::uint64_t chunk_records = std::max<std::uint64_t>(1, (8u << 20) / rs);
    std::vector<std::uint8_t> buffer(chunk_records * rs);
    const unsigned threads = 2;
    checksum = Checksum();
    Status status;
    for (std::uint64_t done = 0; done < count && status;) {
        std::uint64_t n = std::min(chunk_records, count - done);
        Checksum parts[threads];
        {
            std::vector<std::jthread> workers;
            for (unsigned t = 0; t < threads; ++t) {
                workers.emplace_back([&, t] {
                    std::uint64_t lo = n * t / threads, hi = n * (t + 1) / threads;
                    parts[t] =
                        generate_records(spec, first + done + lo, hi - lo, buffer.data() + lo * rs);
                });
            }
        }
        for (const Checksum &c : parts) checksum.add(c);
        std::size_t bytes = n * rs, written = 0;
        while (written < bytes) {
            ssize_t w = ::write(fd, buffer.data() + written, bytes - written);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                status = Status::from_errno("writing " + path, errno);
                break;
            }
            written += std::size_t(w);
        }
        done += n;
        if (progress) progress(done);
    }
    if (status && ::fdatasync(fd) != 0) status = Status::from_errno("flushing " + path, errno);
    if (status) status = out.commit();
    if (status) cleanup::untrack(path);
    return status;
}

}  // namespace sortapp
