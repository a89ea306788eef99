// The disk figures: the cache keeps the conditions beside each figure, a malformed cache is
// ignored and replaced, a phase far faster than its expectation flags the figure stale (kept,
// never measured again unasked), and `sortapp probe` and `--remeasure` measure for real.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/generator.hpp"
#include "sortapp/local_sort.hpp"

using namespace sortapp;
using sortapp_test::run_tool;
using sortapp_test::TempDir;
using sortapp_test::tool_path;

namespace {

DiskBandwidth sample_figure(const std::string &device, double read) {
    DiskBandwidth b;
    b.read_mb_s = read;
    b.write_mb_s = 80.5;
    b.mixed_mb_s = 95.25;
    DiskConditions &c = b.conditions;
    c.date = "2026-01-02T03:04:05Z";
    c.measured_at = 1767323045.5;
    c.io_size = 2u << 20;
    c.io_depth = 15;
    c.file_bytes = 64u << 20;
    c.load_average = 3.75;
    c.device = device;
    c.direct = true;
    c.seconds = 1.5;
    return b;
}

void write_text(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A small, quick measurement of the test's own directory.
DiskProbeOptions small_probe(const TempDir &dir, const std::string &cache) {
    DiskProbeOptions o;
    o.dir = dir.path();
    o.cache_path = cache;
    o.bytes = 4u << 20;
    o.io_size = 1u << 20;
    o.io_depth = 4;
    o.max_seconds = 2;
    return o;
}

double cached_measured_at(const std::string &cache) {
    std::ifstream in(cache);
    nlohmann::json doc = nlohmann::json::parse(in);
    REQUIRE(doc["devices"].size() == 1);
    return doc["devices"].begin().value()["conditions"]["measured_at"].get<double>();
}

}  // namespace

TEST_CASE("disk cache: figures and their conditions round-trip, per device", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "sub/dir/disk.json";  // parents are made
    REQUIRE(write_disk_cache(cache, sample_figure("2049", 120.5)));
    REQUIRE(write_disk_cache(cache, sample_figure("77", 300)));
    DiskBandwidth back;
    std::string warning;
    REQUIRE(read_disk_cache(cache, "2049", back, warning));
    CHECK(warning.empty());
    CHECK(back.cached);
    CHECK(back.read_mb_s == 120.5);
    CHECK(back.write_mb_s == 80.5);
    CHECK(back.mixed_mb_s == 95.25);
    const DiskConditions &c = back.conditions;
    CHECK(c.date == "2026-01-02T03:04:05Z");
    CHECK(c.measured_at == 1767323045.5);
    CHECK(c.io_size == (2u << 20));
    CHECK(c.io_depth == 15);
    CHECK(c.file_bytes == (64u << 20));
    CHECK(c.load_average == 3.75);
    CHECK(c.device == "2049");
    CHECK(c.direct);
    CHECK(c.seconds == 1.5);
    REQUIRE(read_disk_cache(cache, "77", back, warning));
    CHECK(back.read_mb_s == 300);
    CHECK_FALSE(read_disk_cache(cache, "5", back, warning));
    CHECK(warning.empty());
    CHECK_FALSE(back.marked_stale);
    // Marked stale: still read, flagged; the other device's entry untouched.
    REQUIRE(mark_disk_cache_stale(cache, "2049"));
    REQUIRE(read_disk_cache(cache, "2049", back, warning));
    CHECK(back.marked_stale);
    CHECK(back.read_mb_s == 120.5);
    REQUIRE(read_disk_cache(cache, "77", back, warning));
    CHECK_FALSE(back.marked_stale);
}

TEST_CASE("disk cache: a malformed cache is ignored with a warning", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "disk.json";
    REQUIRE(write_disk_cache(cache, sample_figure("9", 100)));
    std::ifstream in(cache);
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string bad[] = {
        "9 100 50\n",  // the old one-line-per-device format
        "{\"format\": \"viaduct-sortapp-disk\", \"version\": 1, \"devices\": {",
        "[]",
        "{\"format\": \"viaduct-sortapp-disk\", \"version\": 2, \"devices\": {}}",
        "{\"format\": \"viaduct-sortapp-disk\", \"version\": 1, \"devices\": {\"9\": 5}}",
    };
    for (const std::string &text : bad) {
        INFO(text);
        write_text(cache, text);
        DiskBandwidth b;
        std::string warning;
        CHECK_FALSE(read_disk_cache(cache, "9", b, warning));
        CHECK_FALSE(warning.empty());
    }
    // One field wrong at a time, in an otherwise sound entry.
    const std::pair<std::string, std::string> edits[] = {
        {"\"read_mb_s\": 100.0", "\"read_mb_s\": -100.0"},
        {"\"read_mb_s\": 100.0", "\"read_mb_s\": \"fast\""},
        {"\"io_depth\": 15", "\"io_depth\": 1e9"},
        {"\"io_size\": 2097152", "\"io_size\": 0"},
        {"\"device\": \"9\"", "\"device\": 9"},
        {"\"conditions\": {", "\"conditionz\": {"},
    };
    for (const auto &[from, to] : edits) {
        INFO(from << " -> " << to);
        std::string text = good;
        REQUIRE(text.find(from) != std::string::npos);
        text.replace(text.find(from), from.size(), to);
        write_text(cache, text);
        DiskBandwidth b;
        std::string warning;
        CHECK_FALSE(read_disk_cache(cache, "9", b, warning));
        CHECK_FALSE(warning.empty());
    }
}

TEST_CASE("disk probe: a malformed cache is re-measured and replaced", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "disk.json";
    write_text(cache, "{ this is not json");
    DiskBandwidth b;
    REQUIRE(probe_disk(small_probe(dir, cache), b));
    CHECK_FALSE(b.cached);
    CHECK(b.read_mb_s > 0);
    CHECK(b.write_mb_s > 0);
    CHECK(b.mixed_mb_s > 0);
    CHECK(b.conditions.io_size == (1u << 20));
    CHECK(b.conditions.io_depth == 4);
    CHECK(b.conditions.file_bytes == (4u << 20));
    // The probe file is gone; only the cache (and its lock) is left.
    CHECK(dir.entries() == std::vector<std::string>{"disk.json", "disk.json.lock"});
    // Now the cache is sound and is used, unless the request size differs.
    DiskBandwidth again;
    REQUIRE(probe_disk(small_probe(dir, cache), again));
    CHECK(again.cached);
    CHECK(again.read_mb_s == Approx(b.read_mb_s));
    CHECK(again.conditions.measured_at == Approx(b.conditions.measured_at));
    DiskProbeOptions other = small_probe(dir, cache);
    other.io_size = 512u << 10;
    REQUIRE(probe_disk(other, again));
    CHECK_FALSE(again.cached);
}

TEST_CASE("stale figure: a phase far below its expectation warns and marks it, never measures",
          "[disk_probe]") {
    TempDir dir;
    GeneratorSpec spec;
    Checksum sum;
    REQUIRE(generate_file(spec, dir / "in", 0, 10000, sum));
    SortOptions o;
    o.memory_budget = 64u << 20;
    o.scratch_dir = dir.path();
    const std::string cache = dir / "disk.json";
    // Injected figures from a "busy" measurement of the test directory's disk, with the probe's
    // request size and depth: 1 MB at 0.01 MB/s is expected to take minutes, so any real sort
    // of it beats the expectation.
    struct stat st {};
    REQUIRE(::stat(dir.path().c_str(), &st) == 0);
    const DiskProbeOptions probe = small_probe(dir, cache);
    DiskBandwidth slow = sample_figure(std::to_string(std::uint64_t(st.st_dev)), 0.01);
    slow.write_mb_s = 0.01;
    slow.conditions.io_size = probe.io_size;
    slow.conditions.io_depth = probe.io_depth;
    slow.source = probe;

    SECTION("marked stale in the cache, kept in use, measured again only when asked") {
        REQUIRE(write_disk_cache(cache, slow));
        LocalSortResult r;
        REQUIRE(local_sort(o, dir / "in", dir / "out", slow, r));
        REQUIRE(r.phases.size() == 1);
        CHECK(r.phases[0].stale);
        CHECK(r.figure_stale);
        CHECK(r.stale_note.find("sortapp probe") != std::string::npos);
        CHECK(nlohmann::json::parse(r.phases[0].to_json()).at("stale_figure") == true);
        // Nothing was measured: the entry is the injected one, flagged.
        CHECK(cached_measured_at(cache) == Approx(slow.conditions.measured_at));
        DiskBandwidth next;
        REQUIRE(probe_disk(probe, next));
        CHECK(next.cached);
        CHECK(next.marked_stale);
        CHECK(next.read_mb_s == Approx(0.01));
        CHECK(nlohmann::json::parse(disk_figure_json(next)).at("stale") == true);
        // Asked for (sortapp probe, --remeasure): measured, and no longer stale.
        DiskProbeOptions again = probe;
        again.remeasure = true;
        DiskBandwidth fresh;
        REQUIRE(probe_disk(again, fresh));
        CHECK_FALSE(fresh.cached);
        CHECK_FALSE(fresh.marked_stale);
        CHECK(fresh.read_mb_s > 0.01);
        DiskBandwidth back;
        std::string warning;
        REQUIRE(read_disk_cache(cache, fresh.conditions.device, back, warning));
        CHECK_FALSE(back.marked_stale);
        CHECK(back.conditions.measured_at == Approx(fresh.conditions.measured_at));
    }
    SECTION("without a cache nothing is marked or measured") {
        slow.source.cache_path.clear();
        LocalSortResult r;
        REQUIRE(local_sort(o, dir / "in", dir / "out", slow, r));
        CHECK(r.figure_stale);
        CHECK(r.stale_note.find("sortapp probe") != std::string::npos);
    }
    SECTION("a figure that was not beaten is not stale") {
        DiskBandwidth fast = sample_figure("1", 1e6);
        fast.write_mb_s = 1e6;
        fast.source = slow.source;
        LocalSortResult r;
        REQUIRE(local_sort(o, dir / "in", dir / "out", fast, r));
        CHECK_FALSE(r.phases[0].stale);
        CHECK_FALSE(r.figure_stale);
        CHECK(nlohmann::json::parse(r.phases[0].to_json()).at("stale_figure") == false);
    }
}

TEST_CASE("sortapp probe --json prints positive rates and the conditions", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "disk.json";
    // stdout alone into the file; warnings (a busy machine) go to run.out.
    auto run = run_tool("(" + tool_path("SORTAPP_BIN") + " probe --json --scratch '" + dir.path() +
                        "' --disk-cache '" + cache +
                        "' --probe-size 4M --io-size 1M --io-depth 4 --max-seconds 2 > '" +
                        (dir / "out.json") + "')");
    INFO(run.out);
    REQUIRE(run.exit_code == 0);
    std::ifstream out(dir / "out.json");
    nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["read_mb_s"].get<double>() > 0);
    CHECK(j["write_mb_s"].get<double>() > 0);
    CHECK(j["mixed_mb_s"].get<double>() > 0);
    CHECK(j["cached"] == false);
    CHECK(j["conditions"]["io_size"] == (1u << 20));
    CHECK(j["conditions"]["io_depth"] == 4);
    CHECK(j["conditions"]["file_bytes"] == (4u << 20));
    CHECK(j["conditions"]["measured_at"].get<double>() > 1.6e9);  // a calendar date
    CHECK(j["conditions"]["date"].get<std::string>().size() == 20);
    CHECK(dir.entries() == std::vector<std::string>{"disk.json", "disk.json.lock", "out.json"});
    auto bad = run_tool(tool_path("SORTAPP_BIN") + " probe --scratch '" + dir.path() +
                        "/missing' --no-cache");
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.find("missing") != std::string::npos);
}

TEST_CASE("sortapp local --remeasure measures again (the cache's date changes)", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "disk.json";
    GeneratorSpec spec;
    Checksum sum;
    REQUIRE(generate_file(spec, dir / "in", 0, 1000, sum));
    const std::string common = " --io-size 1M --io-depth 4 --disk-cache '" + cache + "'";
    auto probe = run_tool(tool_path("SORTAPP_BIN") + " probe --scratch '" + dir.path() +
                          "' --probe-size 4M --max-seconds 2" + common);
    REQUIRE(probe.exit_code == 0);
    const double first = cached_measured_at(cache);
    const std::string local = tool_path("SORTAPP_BIN") + " local --no-progress --probe-size 4M" +
                              common + " '" + (dir / "in") + "' '" + (dir / "out") + "'";
    auto cached = run_tool(local);
    REQUIRE(cached.exit_code == 0);
    CHECK(cached.out.find("cached measurement") != std::string::npos);
    CHECK(cached_measured_at(cache) == first);
    auto fresh = run_tool(local + " --remeasure");
    REQUIRE(fresh.exit_code == 0);
    CHECK(fresh.out.find("measured now") != std::string::npos);
    CHECK(cached_measured_at(cache) > first);
}

TEST_CASE("disk probe: processes sharing a cache never measure at the same time", "[disk_probe]") {
    TempDir dir;
    const std::string cache = dir / "disk.json";
    const std::string probe = tool_path("SORTAPP_BIN") + " probe --json --scratch '" + dir.path() +
                              "' --disk-cache '" + cache +
                              "' --probe-size 8M --io-size 1M --io-depth 4 --max-seconds 2";
    auto run = run_tool("(" + probe + " > '" + (dir / "a") + "' & " + probe + " > '" + (dir / "b") +
                        "' & wait) 2>&1");
    REQUIRE(run.exit_code == 0);
    auto figure = [&](const char *name) {
        std::ifstream in(dir / name);
        return nlohmann::json::parse(in, nullptr, false);
    };
    const nlohmann::json a = figure("a"), b = figure("b");
    REQUIRE_FALSE(a.is_discarded());
    REQUIRE_FALSE(b.is_discarded());
    const double a0 = a["conditions"]["measured_at"].get<double>();
    const double b0 = b["conditions"]["measured_at"].get<double>();
    const double a1 = a0 + a["conditions"]["seconds"].get<double>();
    const double b1 = b0 + b["conditions"]["seconds"].get<double>();
    INFO("a: " << a0 << " to " << a1 << ", b: " << b0 << " to " << b1);
    // One measurement taken by both (the later asked while the earlier measured), or two
    // that did not overlap.
    CHECK((a0 == b0 || a1 <= b0 || b1 <= a0));
}
