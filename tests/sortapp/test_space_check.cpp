// The free-space check: needs on one disk add up; a disk that cannot hold its sum is named with
// the figures; disks apart are judged apart.
#if defined(__GNUC__) && !defined(__clang__)  // GCC 12's false -Wrestrict in std::string at -O3
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <catch2/catch.hpp>

#include "sortapp/space_check.hpp"

using sortapp::check_space;
using sortapp::SpaceNeed;

TEST_CASE("needs on one disk add up", "[space]") {
    // Each fits alone; together they do not.
    std::vector<SpaceNeed> needs = {{"a", "node 0's output", 600, 1000},
                                    {"a", "node 1's output", 600, 1000}};
    sortapp::Status s = check_space(needs);
    REQUIRE_FALSE(s);
    CHECK(s.message().find("node 0's output 600 B, node 1's output 600 B need 1.2 kB") !=
          std::string::npos);
    CHECK(s.message().find("1.0 kB free") != std::string::npos);
    needs[1].disk = "b";  // on a disk of its own, each fits
    CHECK(check_space(needs));
    CHECK(check_space({}));
    CHECK(check_space({{"a", "nothing", 0, 0}}));  // writing nothing needs no space
}

TEST_CASE("sizes read as people read them", "[space]") {
    CHECK(sortapp::human_bytes(0) == "0 B");
    CHECK(sortapp::human_bytes(999) == "999 B");
    CHECK(sortapp::human_bytes(3000000) == "3.0 MB");
    CHECK(sortapp::human_bytes(78000000000ull) == "78 GB");
    CHECK(sortapp::human_bytes(1000000000000ull) == "1.0 TB");
}
