// The pending output file: a temporary beside the final name until committed or kept.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/pending_file.hpp"

using namespace sortapp;
using sortapp_test::TempDir;

TEST_CASE("pending file: a temporary beside the final name, removed unless committed or kept",
          "[pending_file]") {
    TempDir dir;
    auto temp_name = [&] {
        auto e = dir.entries();
        REQUIRE(e.size() == 1);
        return e[0];
    };
    SECTION("removed when not completed") {
        {
            PendingFile p;
            REQUIRE(p.create(dir / "out", false));
            const std::string name = temp_name();
            CHECK(name.rfind(".out.sortapp-", 0) == 0);
            CHECK(name.size() == std::string(".out.sortapp-XXXXXX").size());
            CHECK(p.temp_path() == dir / name);
            struct stat st {};
            REQUIRE(::stat(p.temp_path().c_str(), &st) == 0);
            CHECK((st.st_mode & 0777) == 0644);
        }
        CHECK(dir.entries().empty());
    }
    SECTION("committed: the final name, with what was written") {
        {
            PendingFile p;
            REQUIRE(p.create(dir / "out", false));
            const std::uint8_t bytes[3] = {1, 2, 3};
            REQUIRE(::pwrite(p.file.fd(), bytes, 3, 0) == 3);
            REQUIRE(p.commit());
        }
        CHECK(dir.entries() == std::vector<std::string>{"out"});
        CHECK(sortapp_test::read_file(dir / "out") == std::vector<std::uint8_t>{1, 2, 3});
        cleanup::untrack(dir / "out");
    }
    SECTION("kept: left under its tagged temporary name for a later commit") {
        std::string kept;
        {
            PendingFile p;
            REQUIRE(p.create(dir / "out", true, "job7"));
            kept = p.keep();
        }
        CHECK(kept == dir / temp_name());
        CHECK(temp_name().rfind(".out.sortapp-job7-", 0) == 0);
        REQUIRE(cleanup::commit(kept, dir / "out"));
        CHECK(dir.entries() == std::vector<std::string>{"out"});
        cleanup::untrack(dir / "out");
    }
    SECTION("a directory that does not exist is named") {
        PendingFile p;
        Status s = p.create(dir / "none/out", false);
        REQUIRE(!s);
        CHECK(s.message().rfind("cannot create the output in " + dir / "none", 0) == 0);
    }
}
