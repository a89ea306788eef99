// The monitor's and nodes' messages on the wire: every message against bytes written out by
// hand (little-endian integers and doubles, strings and lists after a u64 length), and the
// refusals decode owes a node or monitor: short, long or implausible messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "messages.hpp"

namespace cl = sortapp::cluster;

namespace {

// A message written byte by byte, independently of the codec under test.
class Bytes {
  public:
    Bytes &u32(uint32_t v) { return put(&v, 4); }
    Bytes &u64(uint64_t v) { return put(&v, 8); }
    Bytes &f64(double v) { return put(&v, 8); }
    Bytes &str(const std::string &s) {
        u64(s.size());
        return put(s.data(), s.size());
    }
    Bytes &element(const std::string &key, uint32_t node, uint64_t pos) {
        return str(key).u32(node).u64(pos);
    }
    Bytes &figures(const std::string &phase, double seconds) {
        str(phase).f64(seconds).f64(seconds / 2).f64(seconds * 2);
        return u64(1).u64(2).u64(3).u64(4).str("disk");
    }
    const std::vector<char> &get() const { return b_; }
    std::vector<char> without_last() const { return {b_.begin(), b_.end() - 1}; }
    std::vector<char> with_extra() const {
        std::vector<char> v = b_;
        v.push_back(0);
        return v;
    }

  private:
    Bytes &put(const void *p, size_t n) {
        const size_t at = b_.size();
        b_.resize(at + n);
        std::memcpy(b_.data() + at, p, n);
        return *this;
    }
    std::vector<char> b_;
};

template <typename M>
bool decodes(const std::vector<char> &bytes, M &m) {
    return cl::decode(bytes.data(), bytes.size(), m);
}

// The bytes are exactly one encoding of `m`: it encodes to them, and they decode to it.
template <typename M>
void check_wire(const M &m, const Bytes &bytes) {
    CHECK(cl::encode(m) == bytes.get());
    M back;
    REQUIRE(decodes(bytes.get(), back));
    CHECK(cl::encode(back) == bytes.get());
    M m2;
    CHECK_FALSE(decodes(bytes.without_last(), m2));
    CHECK_FALSE(decodes(bytes.with_extra(), m2));
}

cl::PhaseFigures figures(const std::string &phase, double seconds) {
    cl::PhaseFigures f;
    f.phase = phase;
    f.seconds = seconds;
    f.cpu_seconds = seconds / 2;
    f.expected_seconds = seconds * 2;
    f.bytes_read = 1;
    f.bytes_written = 2;
    f.bytes_sent = 3;
    f.bytes_received = 4;
    f.resource = "disk";
    return f;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("job parameters on the wire, and the limits a node holds them to", "[messages]") {
    cl::JobParams p;
    p.record_size = 100;
    p.key_size = 10;
    p.memory_budget = 1u << 30;
    p.block_bytes = 512 * 1024;
    p.read_depth = 4;
    check_wire(p,
               Bytes().u64(100).u64(10).u64(1u << 30).u64(512 * 1024).u32(4).u32(0).u32(0).u32(0));
    cl::JobParams back;
    REQUIRE(decodes(
        Bytes().u64(100).u64(10).u64(0).u64(512 * 1024).u32(4).u32(0).u32(0).u32(0).get(), back));
    CHECK(back.record_size == 100);
    CHECK(back.key_size == 10);
    CHECK(back.memory_budget == 0);
    CHECK(back.block_bytes == 512 * 1024);
    CHECK(back.read_depth == 4);
    CHECK_FALSE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(99).u32(4).u32(0).u32(0).u32(0).get(), back));
    CHECK_FALSE(decodes(
        Bytes().u64(100).u64(10).u64(0).u64((64u << 20) + 1).u32(4).u32(0).u32(0).u32(0).get(),
        back));
    CHECK(decodes(Bytes().u64(100).u64(10).u64(0).u64(64u << 20).u32(4).u32(0).u32(0).u32(0).get(),
                  back));
    CHECK_FALSE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(1).u32(0).u32(0).u32(0).get(), back));
    CHECK_FALSE(decodes(
        Bytes().u64(100).u64(10).u64(0).u64(4096).u32(65).u32(0).u32(0).u32(0).get(), back));
    CHECK(decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(64).u32(0).u32(0).u32(0).get(),
                  back));
    // The algorithm and the passes: the river's, with two passes; nothing else.
    REQUIRE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(4).u32(1).u32(2).u32(0).get(), back));
    CHECK(back.algorithm == cl::kRiver);
    CHECK(back.passes == 2);
    CHECK_FALSE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(4).u32(2).u32(0).u32(0).get(), back));
    CHECK_FALSE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(4).u32(1).u32(3).u32(0).get(), back));
    // --remeasure: a flag, nothing else.
    REQUIRE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(4).u32(0).u32(0).u32(1).get(), back));
    CHECK(back.remeasure == 1);
    CHECK_FALSE(
        decodes(Bytes().u64(100).u64(10).u64(0).u64(4096).u32(4).u32(0).u32(0).u32(2).get(), back));
}

TEST_CASE("a node's check on the wire; rates that are not rates are refused", "[messages]") {
    cl::NodeCheck c;
    c.records = 1000;
    c.disk_read_mb_s = 80;
    c.disk_write_mb_s = 60;
    c.disk_mixed_mb_s = 70;
    c.disk = "host:2049";
    c.scratch_free = 5000;
    c.output_disk = "host:2050";
    c.output_free = 6000;
    check_wire(c, Bytes()
                      .u64(1000)
                      .f64(80)
                      .f64(60)
                      .f64(70)
                      .str("host:2049")
                      .u64(5000)
                      .str("host:2050")
                      .u64(6000));
    cl::NodeCheck unknown;
    CHECK(unknown.scratch_free == cl::NodeCheck::kUnknownFree);  // a disk not sized: not checked
    cl::NodeCheck back;
    auto tail = [](Bytes b) { return b.str("").u64(0).str("").u64(0).get(); };
    REQUIRE(decodes(tail(Bytes().u64(1).f64(80).f64(60).f64(1)), back));
    CHECK_FALSE(decodes(tail(Bytes().u64(1).f64(-1).f64(60).f64(1)), back));
    CHECK_FALSE(decodes(tail(Bytes().u64(1).f64(80).f64(kNaN).f64(1)), back));
    CHECK_FALSE(decodes(tail(Bytes().u64(1).f64(kInf).f64(60).f64(1)), back));
    CHECK_FALSE(decodes(tail(Bytes().u64(1).f64(80).f64(60).f64(-5)), back));
    CHECK_FALSE(
        decodes(Bytes().u64(1).f64(80).f64(60).f64(1).u64(100).get(), back));  // string too long
}

TEST_CASE("phase figures and phases 1 and 2's answer on the wire", "[messages]") {
    check_wire(figures("phase 3b", 2.5), Bytes().figures("phase 3b", 2.5));
    cl::LocalDone d;
    d.records = 1000;
    d.handle = 77;
    d.phases = {figures("phase 1", 1), figures("phase 2", 3)};
    check_wire(d, Bytes().u64(1000).u64(77).u64(2).figures("phase 1", 1).figures("phase 2", 3));
    cl::LocalDone empty;
    check_wire(empty, Bytes().u64(0).u64(0).u64(0));
    cl::PhaseFigures f;
    CHECK_FALSE(decodes(Bytes().figures("phase 1", -1).get(), f));
    CHECK_FALSE(decodes(Bytes().figures("phase 1", kNaN).get(), f));
    cl::LocalDone back;
    CHECK_FALSE(decodes(Bytes().u64(1).u64(2).u64(1).figures("phase 1", -2).get(), back));
    // A count of phases the message cannot hold.
    CHECK_FALSE(decodes(Bytes().u64(1).u64(2).u64(1u << 30).figures("phase 1", 1).get(), back));
}

TEST_CASE("a merge order on the wire; ranges that end before they start are refused",
          "[messages]") {
    cl::MergeOrder m;
    m.handles = {5, 6};
    m.first = {0, 10};
    m.last = {10, 20};
    m.network_mb_s = 90;
    check_wire(m,
               Bytes().u64(2).u64(5).u64(6).u64(2).u64(0).u64(10).u64(2).u64(10).u64(20).f64(90));
    cl::MergeOrder back;
    CHECK_FALSE(decodes(Bytes().u64(1).u64(5).u64(1).u64(11).u64(1).u64(10).f64(1).get(), back));
    CHECK_FALSE(
        decodes(Bytes().u64(2).u64(5).u64(6).u64(1).u64(0).u64(1).u64(1).f64(1).get(), back));
    CHECK_FALSE(decodes(Bytes().u64(1).u64(5).u64(1).u64(0).u64(1).u64(1).f64(-1).get(), back));
    CHECK(decodes(Bytes().u64(1).u64(5).u64(1).u64(3).u64(1).u64(3).f64(0).get(), back));
}

TEST_CASE("phase 3a's sample request on the wire: windows with their whole-window flags",
          "[messages]") {
    cl::SampleRequest q;
    q.samples = 8;
    q.windows = {{0, 99}, {5, 50}};
    q.whole = {1, 0};
    const Bytes bytes = Bytes().u32(8).u64(2).u64(0).u64(99).u32(1).u64(5).u64(50).u32(0);
    check_wire(q, bytes);
    // Flags missing from the list go out as 0; any non-zero flag reads as 1.
    q.whole = {1};
    CHECK(cl::encode(q) == bytes.get());
    cl::SampleRequest back;
    REQUIRE(decodes(Bytes().u32(3).u64(1).u64(4).u64(9).u32(7).get(), back));
    CHECK(back.samples == 3);
    REQUIRE(back.windows.size() == 1);
    CHECK(back.windows[0].lo == 4);
    CHECK(back.windows[0].hi == 9);
    CHECK(back.whole == std::vector<uint8_t>{1});
}

TEST_CASE("phase 3a's replies and count request on the wire", "[messages]") {
    cl::SampleReply s;
    s.per_split = {{{"abc", 1, 4}}, {{"b", 1, 5}, {"c", 1, 9}}};
    check_wire(
        s, Bytes().u64(2).u64(1).element("abc", 1, 4).u64(2).element("b", 1, 5).element("c", 1, 9));
    cl::CountRequest c;
    c.windows = {{0, 100}, {3, 4}};
    c.pivots = {{{"key", 2, 3}}, {}};
    const Bytes counts =
        Bytes().u64(2).u64(0).u64(100).u64(1).element("key", 2, 3).u64(3).u64(4).u64(0);
    check_wire(c, counts);
    // Pivots missing from the list go out as none.
    c.pivots.pop_back();
    CHECK(cl::encode(c) == counts.get());
    cl::CountReply r;
    r.counts = {{1, 2}, {}};
    check_wire(r, Bytes().u64(2).u64(2).u64(1).u64(2).u64(0));
    cl::SampleReply back;
    // A list longer than the message could hold is refused before anything is made of it.
    CHECK_FALSE(decodes(Bytes().u64(1).u64(1ull << 40).get(), back));
}

TEST_CASE("the river algorithm's messages on the wire", "[messages]") {
    check_wire(cl::SampleOrder{5000, 42}, Bytes().u64(5000).u64(42));
    cl::RiverSamples samples;
    samples.samples = {{"k1", 2, 7}, {"k0", 2, 9}};
    check_wire(samples, Bytes().u64(2).element("k1", 2, 7).element("k0", 2, 9));
    cl::RiverOrder order{{{"m", 0, 3}}, 1000, 256u << 10};
    check_wire(order, Bytes().u64(1).element("m", 0, 3).u64(1000).u64(256u << 10));
    cl::RiverOrder back;
    // A batch size no river could use is refused.
    CHECK_FALSE(decodes(Bytes().u64(0).u64(1000).u64(100).get(), back));
    CHECK_FALSE(decodes(Bytes().u64(0).u64(1000).u64((64ull << 20) + 1).get(), back));
    cl::RiverDone done;
    done.input_records = 10;
    done.records = 12;
    done.one_pass = 0;
    done.runs = 3;
    done.phases = {cl::PhaseFigures{"river", 2.0, 1.0, 4.0, 1, 2, 3, 4, "disk"}};
    check_wire(done, Bytes().u64(10).u64(12).u32(0).u32(3).u64(1).figures("river", 2.0));
    cl::RiverDone d2;
    CHECK_FALSE(decodes(Bytes().u64(10).u64(12).u32(2).u32(3).u64(0).get(), d2));
}

TEST_CASE("a node's counters answer on the wire; more than an answer may hold is refused",
          "[messages]") {
    cl::CountersAnswer a;
    a.progress = figures("phase 1", 1);
    a.clock_us = 1700000000000000;
    a.phase_names = {"waiting", "phase 1"};
    a.first = 7;
    a.end = 9;
    a.samples.assign(2 * cl::kSampleBytes, '\x01');
    check_wire(a, Bytes()
                      .figures("phase 1", 1)
                      .u64(1700000000000000)
                      .u64(2)
                      .str("waiting")
                      .str("phase 1")
                      .u64(7)
                      .u64(9)
                      .str(a.samples));
    const auto answer = [](const cl::CountersAnswer &m) {
        std::vector<char> bytes = cl::encode(m);
        cl::CountersAnswer back;
        return cl::decode_counters(bytes.data(), bytes.size(), back);
    };
    CHECK(answer(a).empty());
    cl::CountersAnswer bad = a;
    bad.samples.pop_back();
    CHECK(answer(bad) ==
          "samples of " + std::to_string(2 * cl::kSampleBytes - 1) + " bytes, not whole samples");
    bad = a;
    bad.end = 8;  // two samples from number 7, yet the newest is number 7
    CHECK(answer(bad) == "samples numbered past the newest the node says it has");
    bad = a;
    bad.samples.assign((cl::kMaxSamplesPerAnswer + 1) * cl::kSampleBytes, '\0');
    bad.end = bad.first + cl::kMaxSamplesPerAnswer + 1;
    CHECK(answer(bad) == "513 samples, more than 512");
    bad = a;
    bad.phase_names.assign(cl::kMaxPhaseNames + 1, "x");
    CHECK(answer(bad) == "65 phase names, more than 64");
    bad = a;
    bad.phase_names.push_back(std::string(cl::kMaxPhaseNameBytes + 1, 'x'));
    CHECK(answer(bad) == "a phase name of 65 bytes");
    bad = a;
    bad.phase_names.push_back("");
    CHECK(answer(bad) == "a phase name of 0 bytes");
    bad = a;
    bad.progress.phase.assign(cl::kMaxPhaseNameBytes + 1, 'x');
    CHECK(answer(bad) == "a progress phase of 65 bytes");
    bad = a;
    bad.progress.seconds = kNaN;
    CHECK(answer(bad) == "a progress time that is not a time");
    cl::CountersAnswer back;
    const char junk[] = "not an answer";
    CHECK(cl::decode_counters(junk, sizeof junk, back) == "not one encoding of the reply");
    CHECK_FALSE(cl::decode(junk, sizeof junk, back));
    // A reply buffer of kCountersAnswerBytes holds the largest answer decode() accepts.
    cl::CountersAnswer most = a;
    most.phase_names.assign(cl::kMaxPhaseNames, std::string(cl::kMaxPhaseNameBytes, 'p'));
    most.samples.assign(cl::kMaxSamplesPerAnswer * cl::kSampleBytes, '\0');
    most.end = most.first + cl::kMaxSamplesPerAnswer;
    most.progress.phase = std::string(cl::kMaxPhaseNameBytes, 'p');
    CHECK(answer(most).empty());
    CHECK(cl::encode(most).size() <= cl::kCountersAnswerBytes);
}
