// Record format, checksum and generator.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "sortapp/checksum.hpp"
#include "sortapp/generator.hpp"

using namespace sortapp;

namespace {

// CRC-32 as zlib and the sort benchmark's tools define it, bit by bit, written independently
// of the table-driven library code.
std::uint32_t crc32_bitwise(const std::uint8_t *p, std::size_t n) {
    std::uint32_t c = 0xffffffffu;
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return c ^ 0xffffffffu;
}

const RecordFormat formats[] = {{100, 10}, {80, 8}};

}  // namespace

TEST_CASE("record CRC32 is the standard CRC-32", "[records]") {
    const char *text = "123456789";
    CHECK(record_crc32(reinterpret_cast<const std::uint8_t *>(text), 9) == 0xcbf43926u);
    std::vector<std::uint8_t> rec(100);
    for (std::size_t i = 0; i < rec.size(); ++i) rec[i] = std::uint8_t(i * 7 + 3);
    CHECK(record_crc32(rec.data(), rec.size()) == crc32_bitwise(rec.data(), rec.size()));
}

TEST_CASE("checksum is a 128-bit sum printed in hex", "[records]") {
    Checksum c;
    CHECK(c.hex() == "0");
    c.add(0xffffffffu);
    CHECK(c.hex() == "ffffffff");
    c.lo = 0xffffffffffffffffull;
    c.add(2u);  // carries into the high word
    CHECK(c.hi == 1);
    CHECK(c.lo == 1);
    CHECK(c.hex() == "10000000000000001");
    Checksum parsed;
    REQUIRE(Checksum::parse_hex(c.hex(), parsed));
    CHECK(parsed == c);
    CHECK_FALSE(Checksum::parse_hex("xyz", parsed));
    Checksum a, b;
    a.lo = 0xfffffffffffffff0ull;
    b.lo = 0x20;
    b.hi = 3;
    a.add(b);
    CHECK(a.hi == 4);
    CHECK(a.lo == 0x10);
}

TEST_CASE("generated checksum is the sum of every record's CRC32", "[records]") {
    for (const RecordFormat &f : formats) {
        GeneratorSpec spec{f, Distribution::uniform, 42};
        const std::uint64_t n = 2000;
        std::vector<std::uint8_t> recs(n * f.record_size);
        Checksum got = generate_records(spec, 0, n, recs.data());
        Checksum want;
        for (std::uint64_t i = 0; i < n; ++i)
            want.add(crc32_bitwise(&recs[i * f.record_size], f.record_size));
        CHECK(got == want);
    }
}

TEST_CASE("record i is a pure function of (seed, i)", "[records]") {
    for (const RecordFormat &f : formats) {
        for (Distribution d : all_distributions) {
            GeneratorSpec spec{f, d, 7};
            const std::size_t rs = f.record_size;
            std::vector<std::uint8_t> whole(1000 * rs), a(400 * rs), b(600 * rs);
            Checksum cw = generate_records(spec, 0, 1000, whole.data());
            Checksum ca = generate_records(spec, 0, 400, a.data());
            Checksum cb = generate_records(spec, 400, 600, b.data());
            CHECK(std::memcmp(whole.data(), a.data(), a.size()) == 0);
            CHECK(std::memcmp(whole.data() + a.size(), b.data(), b.size()) == 0);
            ca.add(cb);
            CHECK(ca == cw);
            // Another seed gives other records (except where the key is not random).
            GeneratorSpec other{f, d, 8};
            std::vector<std::uint8_t> o(rs);
            generate_record(other, 5, o.data());
            if (d == Distribution::uniform || d == Distribution::skewed) {
                CHECK(std::memcmp(o.data(), whole.data() + 5 * rs, rs) != 0);
            }
            // The payload carries the record number.
            for (std::uint64_t i : {0ull, 1ull, 999ull}) {
                std::uint64_t number = ~0ull;
                REQUIRE(record_number_of(f, whole.data() + i * rs, number));
                CHECK(number == i);
            }
        }
    }
}

TEST_CASE("100-byte records follow gensort's binary layout", "[records]") {
    GeneratorSpec spec;
    std::vector<std::uint8_t> r(100);
    generate_record(spec, 0x1234abcd, r.data());
    CHECK(r[10] == 0x00);
    CHECK(r[11] == 0x11);
    CHECK(std::string(r.begin() + 12, r.begin() + 44) ==
          "000000000000000000000000"
          "1234ABCD");
    CHECK(r[44] == 0x88);
    CHECK(r[47] == 0xbb);
    CHECK(r[96] == 0xcc);
    CHECK(r[99] == 0xff);
}

TEST_CASE("key distributions have their shape", "[records]") {
    const RecordFormat f{100, 10};
    const std::uint64_t n = 20000;
    auto keys_of = [&](Distribution d) {
        GeneratorSpec spec{f, d, 3};
        std::vector<std::uint8_t> recs(n * 100);
        generate_records(spec, 0, n, recs.data());
        std::vector<std::string> keys;
        for (std::uint64_t i = 0; i < n; ++i)
            keys.emplace_back(recs.begin() + long(i * 100), recs.begin() + long(i * 100 + 10));
        return keys;
    };
    auto distinct = [](const std::vector<std::string> &k) {
        return std::set<std::string>(k.begin(), k.end()).size();
    };
    auto uniform = keys_of(Distribution::uniform);
    CHECK(distinct(uniform) == n);
    auto equal = keys_of(Distribution::equal);
    CHECK(distinct(equal) == 1);
    auto few = keys_of(Distribution::few);
    CHECK(distinct(few) > 1);
    CHECK(distinct(few) <= 7);
    auto sorted = keys_of(Distribution::sorted);
    CHECK(std::is_sorted(sorted.begin(), sorted.end()));
    CHECK(distinct(sorted) == n);
    auto reverse = keys_of(Distribution::reverse);
    CHECK(std::is_sorted(reverse.rbegin(), reverse.rend()));
    CHECK(distinct(reverse) == n);
    // Skewed: heavy-tailed leading bytes (many keys share them) but the keys stay distinct.
    auto skewed = keys_of(Distribution::skewed);
    std::map<std::string, int> heads;
    for (const auto &k : skewed) ++heads[k.substr(0, 4)];
    int top = 0;
    for (const auto &h : heads) top = std::max(top, h.second);
    CHECK(top > int(n / 3));
    CHECK(heads.size() > 100);
    CHECK(distinct(skewed) == n);
}

TEST_CASE("record format validation names the problem", "[records]") {
    CHECK(RecordFormat{100, 10}.validate());
    CHECK(RecordFormat{80, 8}.validate());
    Status s = RecordFormat{8, 10}.validate();
    CHECK_FALSE(s);
    CHECK(s.message().find("larger than the record size") != std::string::npos);
    CHECK_FALSE(RecordFormat{0, 0}.validate());
    std::uint64_t v = 0;
    CHECK(parse_size("3M", v));
    CHECK(v == 3u << 20);
    CHECK_FALSE(parse_size("3X", v));
    CHECK_FALSE(parse_size("-1", v));
}
