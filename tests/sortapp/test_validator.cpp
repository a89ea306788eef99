// sortcheck's validator and its combinable summaries.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "helpers.hpp"
#include "sortapp/generator.hpp"
#include "sortapp/validator.hpp"

using namespace sortapp;
using sortapp_test::TempDir;

namespace {

std::vector<std::uint8_t> records_with_keys(const std::vector<int> &keys) {
    // 80-byte records, 8-byte big-endian keys: numeric order is byte order.
    std::vector<std::uint8_t> out(keys.size() * 80, 0xee);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        for (int b = 0; b < 8; ++b)
            out[i * 80 + std::size_t(b)] = std::uint8_t(std::uint64_t(keys[i]) >> (56 - 8 * b));
        out[i * 80 + 8] = std::uint8_t(i);  // payloads differ
    }
    return out;
}

Summary summarize(const std::vector<std::uint8_t> &recs) {
    Validator v(RecordFormat{80, 8});
    v.add(recs.data(), recs.size() / 80);
    return v.summary();
}

}  // namespace

TEST_CASE("validator finds the first unordered record and counts duplicates", "[validator]") {
    Summary s = summarize(records_with_keys({1, 2, 2, 5, 3, 4, 4, 4, 1}));
    CHECK(s.records == 9);
    CHECK_FALSE(s.sorted());
    REQUIRE(s.first_unordered.has_value());
    CHECK(*s.first_unordered == 4);
    CHECK(s.unordered == 2);
    CHECK(s.duplicate_keys == 3);

    Summary ok = summarize(records_with_keys({1, 1, 300, 70000}));
    CHECK(ok.sorted());
    CHECK(ok.duplicate_keys == 1);
    CHECK(summarize({}).records == 0);
    CHECK(summarize({}).sorted());
}

TEST_CASE("summaries of parts combine into the summary of the whole", "[validator]") {
    std::vector<int> keys = {1, 3, 3, 7, 9, 9, 12, 11, 15, 20, 20, 30};
    Summary whole = summarize(records_with_keys(keys));
    for (std::size_t cut1 = 0; cut1 <= keys.size(); ++cut1) {
        for (std::size_t cut2 = cut1; cut2 <= keys.size(); ++cut2) {
            Summary combined;
            for (auto [lo, hi] :
                 {std::pair{std::size_t{0}, cut1}, {cut1, cut2}, {cut2, keys.size()}}) {
                Summary part = summarize(records_with_keys(
                    std::vector<int>(keys.begin() + long(lo), keys.begin() + long(hi))));
                // Payload bytes differ from the whole's (record numbers restart), so only compare
                // what does not depend on them.
                Summary parsed;
                REQUIRE(Summary::from_text(part.to_text(), parsed));
                CHECK(parsed.to_text() == part.to_text());
                combined.append(parsed);
            }
            CHECK(combined.records == whole.records);
            CHECK(combined.first_unordered == whole.first_unordered);
            CHECK(combined.unordered == whole.unordered);
            CHECK(combined.duplicate_keys == whole.duplicate_keys);
        }
    }
}

TEST_CASE("validating files: checksum equals the generator's, partitions combine", "[validator]") {
    TempDir dir;
    GeneratorSpec spec{RecordFormat{100, 10}, Distribution::sorted, 1};
    Checksum whole_sum, a_sum, b_sum;
    REQUIRE(generate_file(spec, dir / "whole", 0, 5000, whole_sum));
    REQUIRE(generate_file(spec, dir / "a", 0, 2000, a_sum));
    REQUIRE(generate_file(spec, dir / "b", 2000, 3000, b_sum));
    Summary whole, a, b;
    REQUIRE(validate_file(spec.format, dir / "whole", whole));
    REQUIRE(validate_file(spec.format, dir / "a", a));
    REQUIRE(validate_file(spec.format, dir / "b", b));
    CHECK(whole.checksum == whole_sum);
    CHECK(whole.sorted());
    CHECK(whole.records == 5000);
    a.append(b);
    CHECK(a.checksum == whole.checksum);
    CHECK(a.sorted());
    // In the wrong node order the boundary is out of order.
    Summary ba = b;
    Summary a2;
    REQUIRE(validate_file(spec.format, dir / "a", a2));
    ba.append(a2);
    REQUIRE_FALSE(ba.sorted());
    CHECK(*ba.first_unordered == 3000);

    // A flipped byte changes the checksum.
    auto bytes = sortapp_test::read_file(dir / "whole");
    bytes[12345] ^= 1;
    sortapp_test::write_file(dir / "bad", bytes);
    Summary bad;
    REQUIRE(validate_file(spec.format, dir / "bad", bad));
    CHECK_FALSE(bad.checksum == whole.checksum);

    // A size that is not a whole number of records is an error.
    bytes.resize(bytes.size() - 1);
    sortapp_test::write_file(dir / "short", bytes);
    Status s = validate_file(spec.format, dir / "short", bad);
    CHECK_FALSE(s);
    CHECK(s.message().find("not a multiple of the record size") != std::string::npos);
}
