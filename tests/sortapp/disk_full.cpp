// Disk full on a small tmpfs, while writing runs and while writing the output: a clear error,
// no temporary files, nothing at the output path. A ramfs, which cannot reserve space ahead,
// makes a write fail part way instead. Mounting needs CAP_SYS_ADMIN; where the mount is
// refused the test reports itself skipped (exit 77), never passed.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "helpers.hpp"
#include "run_catch.hpp"

using sortapp_test::run_tool;
using sortapp_test::TempDir;
using sortapp_test::tool_path;

namespace {

std::string small_fs;  // a 1 MiB tmpfs, mounted by main()
std::string ramfs;     // a ramfs (no fallocate), mounted by main()

std::vector<std::string> listing(const std::string &dir) {
    auto r = run_tool("ls -A '" + dir + "'");
    std::vector<std::string> names;
    std::size_t start = 0;
    for (std::size_t p; (p = r.out.find('\n', start)) != std::string::npos; start = p + 1) {
        names.push_back(r.out.substr(start, p - start));
    }
    return names;
}

}  // namespace

TEST_CASE("a sort larger than the free space is refused before any work", "[disk_full]") {
    TempDir dir;
    std::string sort = tool_path("SORTAPP_BIN") + " local --no-measure --no-progress";
    REQUIRE(run_tool(tool_path("SORTGEN_BIN") + " 30000 '" + dir / "in'").exit_code == 0);
    for (const char *memory : {"64M", "1M"}) {  // the output alone; the output and the runs
        auto s = run_tool(sort + " --memory " + memory + " --scratch '" + small_fs + "' '" +
                          dir / "in' '" + small_fs + "/out'");
        INFO(memory << ": " << s.out);
        CHECK(s.exit_code != 0);
        CHECK(s.out.find("not enough disk space") != std::string::npos);
        CHECK(s.out.find("3.0 MB") != std::string::npos);  // what the output needs
        CHECK(listing(small_fs).empty());
        CHECK(dir.entries() == std::vector<std::string>{"in"});
    }
}

// The cases below fill the disk while writing: --no-space-check lets the sort start, as a
// disk that another process fills meanwhile would.
TEST_CASE("disk full while writing runs", "[disk_full]") {
    TempDir dir;
    std::string sort =
        tool_path("SORTAPP_BIN") + " local --no-measure --no-progress --no-space-check";
    REQUIRE(run_tool(tool_path("SORTGEN_BIN") + " 30000 '" + dir / "in'").exit_code == 0);
    // 3 MB of input, runs on the 1 MiB file system.
    auto s = run_tool(sort + " --memory 1M --scratch '" + small_fs + "' '" + dir / "in' '" +
                      dir / "out'");
    INFO(s.out);
    CHECK(s.exit_code != 0);
    CHECK(s.out.find("No space left on device") != std::string::npos);
    CHECK(s.out.find("/run-") != std::string::npos);  // names the run being written
    CHECK(listing(small_fs).empty());
    CHECK(dir.entries() == std::vector<std::string>{"in"});
}

TEST_CASE("disk full while writing the output", "[disk_full]") {
    TempDir dir;
    std::string sort =
        tool_path("SORTAPP_BIN") + " local --no-measure --no-progress --no-space-check";
    REQUIRE(run_tool(tool_path("SORTGEN_BIN") + " 30000 '" + dir / "in'").exit_code == 0);
    for (const char *memory : {"64M", "1M"}) {  // one pass, and a merge with runs elsewhere
        auto s = run_tool(sort + " --memory " + memory + " --scratch '" + dir.path() + "' '" +
                          dir / "in' '" + small_fs + "/out'");
        INFO(memory << ": " << s.out);
        CHECK(s.exit_code != 0);
        CHECK(s.out.find("No space left on device") != std::string::npos);
        CHECK(listing(small_fs).empty());
        CHECK(dir.entries() == std::vector<std::string>{"in"});
    }
}

TEST_CASE("a write that fails part way where no space can be reserved", "[disk_full]") {
    // ramfs has no fallocate, so the output is not reserved; past the file size limit of
    // 1 MiB its writes fail with EFBIG, the same path as a disk that fills while writing.
    TempDir dir;
    std::string sort = tool_path("SORTAPP_BIN") + " local --no-measure --no-progress";
    REQUIRE(run_tool(tool_path("SORTGEN_BIN") + " 30000 '" + dir / "in'").exit_code == 0);
    for (const char *memory : {"64M", "1M"}) {
        auto s = run_tool("ulimit -f 1024 && " + sort + " --memory " + memory + " --scratch '" +
                          ramfs + "' '" + dir / "in' '" + ramfs + "/out'");
        INFO(memory << ": " << s.out);
        CHECK(s.exit_code != 0);
        CHECK(s.out.find("writing ") != std::string::npos);
        CHECK(s.out.find("reserving ") == std::string::npos);
        CHECK(s.out.find("File too large") != std::string::npos);
        CHECK(listing(ramfs).empty());
        CHECK(dir.entries() == std::vector<std::string>{"in"});
    }
}

int main(int argc, char **argv) {
    TempDir mount_point;
    if (::mount("tmpfs", mount_point.path().c_str(), "tmpfs", 0, "size=1m") != 0) {
        std::printf(
            "SKIPPED: cannot mount a tmpfs here (%s); the disk-full tests need "
            "CAP_SYS_ADMIN\n",
            std::strerror(errno));
        return 77;
    }
    small_fs = mount_point.path();
    TempDir ram_point;
    if (::mount("ramfs", ram_point.path().c_str(), "ramfs", 0, nullptr) != 0) {
        std::printf("SKIPPED: cannot mount a ramfs here (%s)\n", std::strerror(errno));
        (void)::umount(small_fs.c_str());
        return 77;
    }
    ramfs = ram_point.path();
    int rc = run_catch_session(argc, argv);
    for (const std::string &fs : {small_fs, ramfs}) {
        if (::umount(fs.c_str()) != 0) {
            std::printf("cannot unmount %s: %s\n", fs.c_str(), std::strerror(errno));
            rc = rc == 0 ? 1 : rc;
        }
    }
    return rc;
}
