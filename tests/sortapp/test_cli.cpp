// The tools from the command line: sortgen and sortcheck agree, and every bad input to
// `sortapp local` ends in a clear error, a non-zero exit, no temporary files and no output.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "helpers.hpp"

using sortapp_test::run_tool;
using sortapp_test::TempDir;
using sortapp_test::tool_path;

namespace {

std::string field(const std::string &text, const std::string &name) {
    auto p = text.find(name + ": ");
    if (p == std::string::npos) return "";
    auto e = text.find('\n', p);
    return text.substr(p + name.size() + 2, e - p - name.size() - 2);
}

// The line of `text` that starts with `prefix`.
std::string line_starting(const std::string &text, const std::string &prefix) {
    std::size_t p = text.rfind("\n" + prefix) == std::string::npos ? text.find(prefix)
                                                                   : text.rfind("\n" + prefix) + 1;
    if (p == std::string::npos) return "";
    return text.substr(p, text.find('\n', p) - p);
}

std::string q(const std::string &s) {
    return "'" + s + "'";
}

bool exists(const std::string &path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

struct Tools {
    std::string gen = tool_path("SORTGEN_BIN");
    std::string check = tool_path("SORTCHECK_BIN");
    std::string sort = tool_path("SORTAPP_BIN") + " local --no-measure --no-progress";
};

}  // namespace

TEST_CASE("sortgen's checksum is what sortcheck computes, whole or in partitions", "[cli]") {
    Tools t;
    TempDir dir;
    auto g = run_tool(t.gen + " --distribution skewed --seed 9 30000 " + q(dir / "whole"));
    REQUIRE(g.exit_code == 0);
    std::string sum = field(g.out, "checksum");
    REQUIRE_FALSE(sum.empty());
    auto p =
        run_tool(t.gen + " --distribution skewed --seed 9 --partitions 3 30000 " + q(dir / "part"));
    REQUIRE(p.exit_code == 0);
    CHECK(field(p.out, "checksum") == sum);
    auto c = run_tool(t.check + " --json " + q(dir / "whole"));
    CHECK(c.exit_code == 1);  // skewed input is not sorted
    CHECK(c.out.find("\"checksum\":\"" + sum + "\"") != std::string::npos);
    CHECK(c.out.find("\"sorted\":false") != std::string::npos);
    CHECK(c.out.find("\"records\":30000") != std::string::npos);
    // The three partitions concatenated are the whole file: checked as a list, or per
    // partition with summaries combined afterwards.
    auto list = run_tool(t.check + " " + q(dir / "part.0") + " " + q(dir / "part.1") + " " +
                         q(dir / "part.2"));
    CHECK(field(list.out, "checksum") == sum);
    for (int i = 0; i < 3; ++i) {
        auto s = run_tool(t.check + " --summary-out " + q(dir / ("sum." + std::to_string(i))) +
                          " " + q(dir / ("part." + std::to_string(i))));
        CHECK((s.exit_code == 0 || s.exit_code == 1));
    }
    auto combined = run_tool(t.check + " --combine " + q(dir / "sum.0") + " " + q(dir / "sum.1") +
                             " " + q(dir / "sum.2"));
    CHECK(field(combined.out, "checksum") == sum);
    CHECK(field(combined.out, "records") == "30000");
    CHECK(field(combined.out, "sorted") == field(list.out, "sorted"));
}

TEST_CASE("sortapp local sorts, sortcheck confirms with the generator's checksum", "[cli]") {
    Tools t;
    TempDir dir;
    for (const char *format : {"", " --record-size 80 --key-size 8"}) {
        auto g = run_tool(t.gen + format + " --distribution few 50000 " + q(dir / "in"));
        REQUIRE(g.exit_code == 0);
        std::string sum = field(g.out, "checksum");
        auto s = run_tool(t.sort + format + " --memory 1M --json " + q(dir / "in") + " " +
                          q(dir / "out"));
        INFO(s.out);
        REQUIRE(s.exit_code == 0);
        CHECK(s.out.find("\"one_pass\":false") != std::string::npos);
        CHECK(s.out.find("\"name\":\"phase 2\"") != std::string::npos);
        auto c = run_tool(t.check + format + " --expect-checksum " + sum +
                          " --expect-records 50000 " + q(dir / "out"));
        INFO(c.out);
        CHECK(c.exit_code == 0);
        CHECK(field(c.out, "sorted") == "yes");
        // A plain run prints the report lines.
        auto plain = run_tool(t.sort + format + " --memory 1M --disk-read 500 --disk-write 400 " +
                              q(dir / "in") + " " + q(dir / "out2"));
        REQUIRE(plain.exit_code == 0);
        CHECK(plain.out.find("expected: phase 1") != std::string::npos);
        // NOW-Sort's expectation: each pass reads and writes the 50000 records once.
        const double bytes = 50000.0 * (format[0] ? 80 : 100), pass = bytes / 500e6 + bytes / 400e6;
        const std::string json = s.out;
        auto passes_at = json.find("\"merge_passes\":");
        REQUIRE(passes_at != std::string::npos);
        const int passes = std::atoi(json.c_str() + passes_at + 15);
        CHECK(passes >= 2);  // 1 MiB of memory: runs outnumber the fan-in
        for (const char *phase : {"phase 1", "phase 2"}) {
            std::string line = line_starting(plain.out, phase);
            INFO(line);
            double secs = -1, rate = -1, cpu = -1, per_gb = -1, expected = -1, ratio = -1;
            CHECK(std::sscanf(line.c_str() + 7,
                              " %lf s %lf MB/s cpu %lf%% %lf CPU-s/GB expected %lf s "
                              "actual/expected %lf",
                              &secs, &rate, &cpu, &per_gb, &expected, &ratio) == 6);
            CHECK(secs > 0);
            // CPU-seconds per GB: the CPU share times the seconds, over the phase's input, within
            // the rounding of the printed figures (cpu to 0.5%, seconds to 0.005 s, CPU-s/GB to
            // 0.005).
            const double gb = bytes / 1e9;
            const double rounding = (0.005 * secs + cpu / 100 * 0.005) / gb + 0.005;
            CHECK(per_gb > 0);
            CHECK(per_gb == Approx(cpu / 100 * secs / gb).margin(rounding));
            CHECK(expected > 0);
            const double want = std::string(phase) == "phase 1" ? pass : passes * pass;
            CHECK(expected == Approx(want).margin(0.0051));  // printed with 2 decimals
            CHECK(ratio > 0);
        }
    }
}

TEST_CASE("bad input: size not a multiple of the record size", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    sortapp_test::write_file(dir / "in", std::vector<std::uint8_t>(1050, 7));
    auto s = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "out"));
    CHECK(s.exit_code != 0);
    CHECK(s.out.find("size 1050 bytes is not a multiple of the record size (100 bytes)") !=
          std::string::npos);
    CHECK(dir.entries() == std::vector<std::string>{"in"});
    // 1050 bytes are whole 150-byte records.
    auto ok = run_tool(t.sort + " --record-size 150 " + q(dir / "in") + " " + q(dir / "out"));
    CHECK(ok.exit_code == 0);
}

TEST_CASE("bad input: empty input gives an empty output", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    sortapp_test::write_file(dir / "in", {});
    auto s = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "out"));
    INFO(s.out);
    CHECK(s.exit_code == 0);
    REQUIRE(exists(dir / "out"));
    CHECK(sortapp_test::read_file(dir / "out").empty());
    CHECK(dir.entries() == (std::vector<std::string>{"in", "out"}));
    auto c = run_tool(t.check + " --json " + q(dir / "out"));
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("\"records\":0") != std::string::npos);
}

TEST_CASE("bad input: unreadable input", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    auto missing = run_tool(t.sort + " " + q(dir / "nothing") + " " + q(dir / "out"));
    CHECK(missing.exit_code != 0);
    CHECK(missing.out.find("cannot read input " + dir / "nothing" +
                           ": No such file or directory") != std::string::npos);
    ::mkdir((dir / "adir").c_str(), 0755);
    auto directory = run_tool(t.sort + " " + q(dir / "adir") + " " + q(dir / "out"));
    CHECK(directory.exit_code != 0);
    CHECK(directory.out.find("is not a regular file") != std::string::npos);
    if (::geteuid() != 0) {  // root reads anything: permissions cannot make it fail
        sortapp_test::write_file(dir / "locked", std::vector<std::uint8_t>(100, 1));
        ::chmod((dir / "locked").c_str(), 0);
        auto locked = run_tool(t.sort + " " + q(dir / "locked") + " " + q(dir / "out"));
        CHECK(locked.exit_code != 0);
        CHECK(locked.out.find("Permission denied") != std::string::npos);
        ::unlink((dir / "locked").c_str());
    }
    CHECK(dir.entries() == std::vector<std::string>{"adir"});
}

TEST_CASE("bad input: output path is the input", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    REQUIRE(run_tool(t.gen + " 1000 " + q(dir / "in")).exit_code == 0);
    auto before = sortapp_test::read_file(dir / "in");
    auto same = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "in"));
    CHECK(same.exit_code != 0);
    CHECK(same.out.find("is the input file") != std::string::npos);
    REQUIRE(::symlink((dir / "in").c_str(), (dir / "link").c_str()) == 0);
    auto link = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "link"));
    CHECK(link.exit_code != 0);
    CHECK(link.out.find("is the input file") != std::string::npos);
    auto dotted = run_tool("cd " + q(dir.path()) + " && " + t.sort + " in ./in");
    CHECK(dotted.exit_code != 0);
    CHECK(sortapp_test::read_file(dir / "in") == before);
    CHECK(dir.entries() == (std::vector<std::string>{"in", "link"}));
}

TEST_CASE("bad input: unwritable output directory", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    REQUIRE(run_tool(t.gen + " 1000 " + q(dir / "in")).exit_code == 0);
    auto missing = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "no/such/dir/out"));
    CHECK(missing.exit_code != 0);
    CHECK(missing.out.find("cannot create the output in " + dir / "no/such/dir") !=
          std::string::npos);
    auto not_dir = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "in/out"));
    CHECK(not_dir.exit_code != 0);
    CHECK(not_dir.out.find("Not a directory") != std::string::npos);
    if (::geteuid() != 0) {  // root writes anywhere: permissions cannot make it fail
        ::mkdir((dir / "ro").c_str(), 0555);
        auto ro = run_tool(t.sort + " " + q(dir / "in") + " " + q(dir / "ro/out"));
        CHECK(ro.exit_code != 0);
        CHECK(ro.out.find("Permission denied") != std::string::npos);
        ::rmdir((dir / "ro").c_str());
    }
    CHECK(dir.entries() == std::vector<std::string>{"in"});
}

TEST_CASE("bad input: memory budget below the minimum", "[cli][bad_input]") {
    Tools t;
    TempDir dir;
    REQUIRE(run_tool(t.gen + " 1000 " + q(dir / "in")).exit_code == 0);
    auto s = run_tool(t.sort + " --memory 200K " + q(dir / "in") + " " + q(dir / "out"));
    CHECK(s.exit_code != 0);
    auto p = s.out.find("memory budget 204800 bytes is below the minimum of ");
    REQUIRE(p != std::string::npos);
    unsigned long long minimum = 0;
    CHECK(std::sscanf(s.out.c_str() + p,
                      "memory budget 204800 bytes is below the minimum of %llu bytes",
                      &minimum) == 1);
    CHECK(minimum >= (1u << 20));
    CHECK(dir.entries() == std::vector<std::string>{"in"});
}

TEST_CASE("bad input: a file larger than the file size limit", "[cli][bad_input]") {
    // RLIMIT_FSIZE refuses files past 1 MiB. Every run and output has its space reserved
    // before it is written, so the sort stops there, naming the file, whichever it is. (A write
    // failing part way, where nothing can be reserved, is in disk_full.cpp.)
    Tools t;
    TempDir dir;
    REQUIRE(run_tool(t.gen + " 30000 " + q(dir / "in")).exit_code == 0);
    for (const char *memory : {"64M", "1M"}) {
        auto s = run_tool("ulimit -f 1024 && " + t.sort + " --memory " + memory + " " +
                          q(dir / "in") + " " + q(dir / "out"));
        INFO(memory << ": " << s.out);
        CHECK(s.exit_code != 0);
        CHECK(s.out.find("reserving ") != std::string::npos);
        CHECK(s.out.find("File too large") != std::string::npos);
        CHECK(dir.entries() == std::vector<std::string>{"in"});
    }
}
