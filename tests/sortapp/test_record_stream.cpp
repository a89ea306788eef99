// Record streams (local file source and a scripted in-memory source) and the k-way merge loop
// over them; the I/O buffers they read into.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "sortapp/io_ring.hpp"
#include "sortapp/record_stream.hpp"
#include "sortapp/sort_options.hpp"
#include "sortapp/space_reclaimer.hpp"
#include "sortapp/stream_merge.hpp"

using namespace sortapp;
using sortapp_test::TempDir;

namespace {

// `n` records; the key bytes are drawn from {0, 1} (many equal keys and equal 8-byte prefixes)
// and the payload starts with `tag` and the record's number, so no two records are alike.
std::vector<std::uint8_t> make_records(const RecordFormat &f, std::size_t n, unsigned tag,
                                       std::mt19937 &rng) {
    std::vector<std::uint8_t> r(n * f.record_size);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t *rec = &r[i * f.record_size];
        for (std::size_t b = 0; b < f.key_size; ++b) rec[b] = std::uint8_t(rng() % 2);
        rec[f.key_size] = std::uint8_t(tag);
        for (std::size_t b = 0; b < 4; ++b) rec[f.key_size + 1 + b] = std::uint8_t(i >> (8 * b));
    }
    return r;
}

// Records stably sorted by key: what a merge of sorted streams must give, streams in order.
std::vector<std::uint8_t> stable_key_sort(const RecordFormat &f,
                                          const std::vector<std::uint8_t> &in) {
    const std::size_t rs = f.record_size, n = in.size() / rs;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return f.compare(&in[a * rs], &in[b * rs]) < 0;
    });
    std::vector<std::uint8_t> out;
    for (std::size_t i : order) out.insert(out.end(), &in[i * rs], &in[i * rs] + rs);
    return out;
}

// Reads a stream to its end.
std::vector<std::uint8_t> drain(const RecordFormat &f, RecordStream &s) {
    std::vector<std::uint8_t> out;
    while (s.record() != nullptr) {
        CHECK(s.prefix() == key_prefix(s.record(), f.key_size));
        out.insert(out.end(), s.record(), s.record() + f.record_size);
        REQUIRE(s.advance());
    }
    return out;
}

// What a scripted source saw, kept by the test (the stream owns the source).
struct ReadLog {
    unsigned slots = 0;
    std::vector<std::uint64_t> offsets;
    std::vector<std::size_t> sizes;
    unsigned in_flight = 0, max_in_flight = 0;
};

// Bytes in memory. A read started is only noted; its bytes arrive when the stream waits for it,
// or, like a file's late read, when the source goes with the read still in flight. The
// `fail_at`-th read waited for (from 1) fails.
class MemorySource final : public BlockSource {
  public:
    MemorySource(const std::vector<std::uint8_t> &data, ReadLog &log, std::size_t fail_at = 0)
        : data_(data), log_(log), fail_at_(fail_at) {}
    ~MemorySource() override {
        for (Read &r : reads_)
            if (r.pending) land(r);
    }
    void set_slots(unsigned slots) override {
        reads_.resize(slots);
        log_.slots = slots;
    }
    Status start_read(unsigned slot, std::uint8_t *buffer, std::uint64_t offset,
                      std::size_t bytes) override {
        REQUIRE(slot < reads_.size());
        REQUIRE(!reads_[slot].pending);
        reads_[slot] = {buffer, offset, bytes, true};
        log_.offsets.push_back(offset);
        log_.sizes.push_back(bytes);
        log_.max_in_flight = std::max(log_.max_in_flight, ++log_.in_flight);
        return Status::ok();
    }
    Status finish_read(unsigned slot) override {
        REQUIRE(reads_[slot].pending);
        land(reads_[slot]);
        if (++finished_ == fail_at_)
            return Status::error("read " + std::to_string(finished_) + " failed");
        return Status::ok();
    }

  private:
    struct Read {
        std::uint8_t *buffer = nullptr;
        std::uint64_t offset = 0;
        std::size_t bytes = 0;
        bool pending = false;
    };
    void land(Read &r) {
        std::memcpy(r.buffer, data_.data() + r.offset, r.bytes);
        r.pending = false;
        --log_.in_flight;
    }
    const std::vector<std::uint8_t> &data_;
    ReadLog &log_;
    std::size_t fail_at_, finished_ = 0;
    std::vector<Read> reads_;
};

}  // namespace

TEST_CASE("record stream: a file's range, read through the ring, in order", "[record_stream]") {
    std::mt19937 rng(5);
    const RecordFormat formats[] = {{100, 10}, {80, 8}};
    for (const RecordFormat &f : formats) {
        const std::size_t rs = f.record_size, per_block = 7;
        TempDir dir;
        for (std::size_t n : {std::size_t(0), std::size_t(1), per_block - 1, per_block,
                              per_block + 1, 3 * per_block + 5}) {
            auto data = make_records(f, n, 1, rng);
            sortapp_test::write_file(dir / "run", data);
            for (unsigned depth : {2u, 3u, 5u}) {
                // A block that is not a whole number of records is rounded down to one.
                for (std::size_t block : {per_block * rs, per_block * rs + rs / 2}) {
                    IoRing ring;
                    REQUIRE(ring.init(8));
                    auto file = std::make_unique<FileSource>(ring);
                    REQUIRE(file->open(dir / "run", false));
                    const std::uint64_t first = n > 2 ? rs : 0, end = n > 2 ? (n - 1) * rs : n * rs;
                    RecordStreams streams;
                    streams.push_back(std::make_unique<RecordStream>(std::move(file), f, first, end,
                                                                     block, depth));
                    REQUIRE(start_streams(streams));
                    INFO("n " << n << " depth " << depth << " block " << block);
                    CHECK(drain(f, *streams[0]) ==
                          std::vector<std::uint8_t>(data.begin() + std::ptrdiff_t(first),
                                                    data.begin() + std::ptrdiff_t(end)));
                }
            }
        }
    }
}

TEST_CASE("record stream: O_DIRECT reads of whole blocks, the file ending inside the last",
          "[record_stream]") {
    std::mt19937 rng(6);
    const RecordFormat f{100, 10};
    const std::size_t block = records_per_io_unit(f) * f.record_size;
    TempDir dir;
    auto data = make_records(f, 2 * records_per_io_unit(f) + 3, 2, rng);
    sortapp_test::write_file(dir / "run", data);
    IoRing ring;
    REQUIRE(ring.init(8));
    auto file = std::make_unique<FileSource>(ring);
    REQUIRE(file->open(dir / "run", true));  // buffered where the file system refuses O_DIRECT
    RecordStreams streams;
    streams.push_back(std::make_unique<RecordStream>(std::move(file), f, 0, data.size(), block, 2));
    REQUIRE(start_streams(streams));
    CHECK(drain(f, *streams[0]) == data);
}

TEST_CASE("record stream: reads go ahead through every buffer, no further", "[record_stream]") {
    std::mt19937 rng(7);
    const RecordFormat f{100, 10};
    const std::size_t rs = f.record_size, per_block = 4, blocks = 10;
    auto data = make_records(f, per_block * blocks - 1, 3, rng);  // the last block is short
    ReadLog log;
    RecordStream s(std::make_unique<MemorySource>(data, log), f, 0, data.size(), per_block * rs, 3);
    CHECK(log.slots == 3);
    REQUIRE(s.prefetch());
    CHECK(log.offsets == std::vector<std::uint64_t>{0, per_block * rs, 2 * per_block * rs});
    REQUIRE(s.wait_first());
    CHECK(log.offsets.size() == 3);  // the first block is being consumed: nothing to refill yet
    for (std::size_t i = 0; i < per_block; ++i) REQUIRE(s.advance());
    CHECK(log.offsets.size() == 4);  // the consumed buffer now reads the fourth block
    auto rest = drain(f, s);
    CHECK(rest == std::vector<std::uint8_t>(data.begin() + per_block * rs, data.end()));
    CHECK(log.max_in_flight == 3);
    REQUIRE(log.offsets.size() == blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        CHECK(log.offsets[b] == b * per_block * rs);
        CHECK(log.sizes[b] == (b + 1 < blocks ? per_block * rs : (per_block - 1) * rs));
    }
    CHECK(log.in_flight == 0);
}

TEST_CASE("record stream: a failed read is the stream's error", "[record_stream]") {
    std::mt19937 rng(8);
    const RecordFormat f{80, 8};
    const std::size_t per_block = 3;
    auto data = make_records(f, 5 * per_block, 4, rng);
    ReadLog log;
    RecordStream s(std::make_unique<MemorySource>(data, log, 3), f, 0, data.size(),
                   per_block * f.record_size, 2);
    REQUIRE(s.prefetch());
    REQUIRE(s.wait_first());
    Status st;
    std::size_t records = 0;
    while (st && s.record() != nullptr) {
        ++records;
        st = s.advance();
    }
    REQUIRE(!st);
    CHECK(st.message() == "read 3 failed");
    CHECK(records == 2 * per_block);  // the records of the two blocks that arrived
}

TEST_CASE("record stream: buffers outlive reads still in flight when the stream goes",
          "[record_stream]") {
    std::mt19937 rng(9);
    const RecordFormat f{100, 10};
    auto data = make_records(f, 40, 5, rng);
    ReadLog log;
    {
        RecordStream s(std::make_unique<MemorySource>(data, log), f, 0, data.size(),
                       4 * f.record_size, 4);
        REQUIRE(s.prefetch());
        REQUIRE(s.wait_first());
        CHECK(log.in_flight == 3);
    }  // the source lands its three late reads in the buffers before they are unmapped
    CHECK(log.in_flight == 0);
}

TEST_CASE("stream merge: k streams, equal keys in stream order, progress", "[stream_merge]") {
    std::mt19937 rng(10);
    const RecordFormat formats[] = {{100, 10}, {80, 8}, {20, 3}};
    for (const RecordFormat &f : formats) {
        const std::size_t rs = f.record_size;
        for (std::size_t k = 1; k <= 6; ++k) {
            TempDir dir;
            std::vector<std::vector<std::uint8_t>> runs;
            std::vector<std::uint8_t> all;
            std::vector<ReadLog> logs(k);
            RecordStreams streams;
            for (std::size_t i = 0; i < k; ++i) {
                std::size_t n = i == 1 ? 0 : rng() % 60;  // stream 1 is empty
                runs.push_back(stable_key_sort(f, make_records(f, n, unsigned(i), rng)));
                all.insert(all.end(), runs[i].begin(), runs[i].end());
            }
            for (std::size_t i = 0; i < k; ++i)
                streams.push_back(
                    std::make_unique<RecordStream>(std::make_unique<MemorySource>(runs[i], logs[i]),
                                                   f, 0, runs[i].size(), 5 * rs, 2));
            REQUIRE(start_streams(streams));
            IoRing ring;
            REQUIRE(ring.init(8));
            File out;
            REQUIRE(File::create(dir / "out", false, true, out));
            std::vector<std::uint64_t> seen;
            std::uint64_t merged = 0;
            {
                SequentialWriter writer(ring, out, io_alignment, 2);
                auto progress = [&](std::uint64_t bytes) { seen.push_back(bytes); };
                REQUIRE(merge_streams(f, streams, writer, 7 * rs, progress, merged));
                REQUIRE(writer.finish(false));
            }
            out.close();
            INFO("format " << f.describe() << ", k " << k);
            CHECK(merged == all.size());
            CHECK(sortapp_test::read_file(dir / "out") == stable_key_sort(f, all));
            std::vector<std::uint64_t> every;
            for (std::uint64_t b = 7 * rs; b <= all.size(); b += 7 * rs) every.push_back(b);
            CHECK(seen == every);
        }
    }
}

TEST_CASE("stream merge: a failed read ends the merge with its error", "[stream_merge]") {
    std::mt19937 rng(12);
    const RecordFormat f{100, 10};
    auto a = stable_key_sort(f, make_records(f, 30, 0, rng));
    auto b = stable_key_sort(f, make_records(f, 30, 1, rng));
    ReadLog la, lb;
    RecordStreams streams;
    streams.push_back(std::make_unique<RecordStream>(std::make_unique<MemorySource>(a, la), f, 0,
                                                     a.size(), 4 * f.record_size, 2));
    streams.push_back(std::make_unique<RecordStream>(std::make_unique<MemorySource>(b, lb, 4), f, 0,
                                                     b.size(), 4 * f.record_size, 2));
    REQUIRE(start_streams(streams));
    TempDir dir;
    IoRing ring;
    REQUIRE(ring.init(8));
    File out;
    REQUIRE(File::create(dir / "out", false, true, out));
    SequentialWriter writer(ring, out, io_alignment, 2);
    std::uint64_t merged = 0;
    Status st = merge_streams(f, streams, writer, 1u << 20, {}, merged);
    REQUIRE(!st);
    CHECK(st.message() == "read 4 failed");
    CHECK(merged < a.size() + b.size());
}

namespace {

// The line of /proc/self/smaps `field` for the mapping that holds `p` ("" if none).
std::string smaps_field(const void *p, const std::string &field) {
    std::ifstream in("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        std::uintptr_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
            line.find(':') > line.find(' '))
            inside = lo <= at && at < hi;
        else if (inside && line.rfind(field + ":", 0) == 0)
            return line;
    }
    return "";
}

}  // namespace

TEST_CASE("record stream: large I/O buffers ask for huge pages, small ones do not",
          "[record_stream]") {
    // The kernel's setting decides: "never" refuses every request.
    std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string thp;
    std::getline(setting, thp);
    const bool refused = thp.empty() || thp.find("[never]") != std::string::npos;
    Buffer large(16u << 20), small(64u << 10);
    REQUIRE(large.valid());
    REQUIRE(small.valid());
    INFO("transparent_hugepage: " << thp);
    const std::string big = smaps_field(large.data(), "THPeligible");
    REQUIRE_FALSE(big.empty());
    CHECK((big.find('1') != std::string::npos) == !refused);
    // "always" makes every mapping eligible; otherwise only the ones that asked.
    if (thp.find("[always]") == std::string::npos)
        CHECK(smaps_field(small.data(), "THPeligible").find('0') != std::string::npos);
}

TEST_CASE("record stream: a large buffer starts on a huge page boundary and holds its size",
          "[record_stream]") {
    // Sizes that are no multiple of a huge page or even of a page, moved and freed.
    for (std::size_t bytes :
         {std::size_t{4u << 20}, std::size_t{(16u << 20) + 4096}, std::size_t{(5u << 20) + 100}}) {
        Buffer b(bytes);
        REQUIRE(b.valid());
        CHECK(b.size() == bytes);
        CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % (2u << 20) == 0);
        std::memset(b.data(), 0x5a, bytes);  // every byte of it is there
        Buffer moved(std::move(b));
        CHECK(moved.data()[bytes - 1] == 0x5a);
    }
}

TEST_CASE("space reclaimer: a run gives its blocks back as the merge reads it, every record intact",
          "[record_stream]") {
    std::mt19937 rng(9);
    const RecordFormat f{100, 10};
    TempDir dir;
    // 40 MB: two whole pieces to punch, and a tail the close frees.
    const std::size_t n = 400000;
    const auto data = make_records(f, n, 3, rng);
    sortapp_test::write_file(dir / "run", data);
    struct stat before {};
    REQUIRE(::stat((dir / "run").c_str(), &before) == 0);
    std::vector<std::uint8_t> got;
    {
        IoRing ring;
        REQUIRE(ring.init(8));
        RecordStreams streams;
        SpaceReclaimer reclaimer;
        auto file = std::make_unique<FileSource>(ring);
        REQUIRE(file->open(dir / "run", false));
        file->release_consumed(reclaimer, dir / "run");
        streams.push_back(
            std::make_unique<RecordStream>(std::move(file), f, 0, n * 100, 10000 * 100, 3));
        REQUIRE(start_streams(streams));
        got = drain(f, *streams[0]);
    }  // the reclaimer punches what is queued before it goes
    CHECK(got == data);
    struct stat after {};
    REQUIRE(::stat((dir / "run").c_str(), &after) == 0);
    INFO("blocks before " << before.st_blocks << ", after " << after.st_blocks);
    if (after.st_blocks == before.st_blocks)
        WARN("no hole punched: this file system may not punch holes");
    else
        CHECK(std::uint64_t(before.st_blocks - after.st_blocks) * 512 >=
              2 * SpaceReclaimer::kPiece - 2 * 4096);
    CHECK(after.st_size == before.st_size);  // the file keeps its size: only blocks go
}

TEST_CASE("space reclaimer: adopts only the file the descriptor reads", "[record_stream]") {
    TempDir dir;
    sortapp_test::write_file(dir / "a", std::vector<std::uint8_t>(8192, 1));
    sortapp_test::write_file(dir / "b", std::vector<std::uint8_t>(8192, 2));
    IoRing ring;
    REQUIRE(ring.init(2));
    FileSource a(ring);
    REQUIRE(a.open(dir / "a", false));
    SpaceReclaimer reclaimer;
    CHECK(reclaimer.adopt(a.file().fd(), dir / "b") == -1);
    CHECK(reclaimer.adopt(a.file().fd(), dir / "missing") == -1);
    CHECK(reclaimer.adopt(a.file().fd(), dir / "a") >= 0);
    reclaimer.release(-1, 0, SpaceReclaimer::kPiece);  // a refused file: nothing happens
}
