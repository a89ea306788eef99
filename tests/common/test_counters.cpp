// The counters (rates between two samples, the /proc and /sys readers) and the sampler's ring
// and thread: arithmetic on hand-made samples, and counters that follow work this process does.
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "viaduct/counters.hpp"
#include "viaduct/sampler.hpp"

using Catch::Matchers::Contains;
using viaduct::CounterSample;
using viaduct::Sampler;

namespace {

// Two samples one second apart on a 2-CPU host: the later one has every counter grown.
struct TwoSamples {
    CounterSample a, b;
    TwoSamples() {
        a.time_us = 1'000'000'000;
        b.time_us = a.time_us + 2'000'000;  // 2 s
        a.cpus = b.cpus = 2;
        b.proc_user_us = a.proc_user_us + 1'500'000;  // 0.75 CPU of user time
        b.proc_sys_us = a.proc_sys_us + 500'000;      // 0.25 CPU of system time
        // 4 CPU-seconds of host time: 2.5 busy (of which 2 are this process), 1 idle,
        // 0.4 iowait, 0.1 stolen.
        b.host_user_us = a.host_user_us + 2'000'000;
        b.host_sys_us = a.host_sys_us + 500'000;
        b.host_idle_us = a.host_idle_us + 1'000'000;
        b.host_iowait_us = a.host_iowait_us + 400'000;
        b.host_steal_us = a.host_steal_us + 100'000;
        b.proc_read_bytes = 20'000'000;
        b.proc_write_bytes = 40'000'000;
        b.dev_read_bytes = 60'000'000;
        b.dev_write_bytes = 80'000'000;
        b.dev_busy_us = 1'000'000;
        b.net_sent_bytes = 10'000'000;
        b.net_received_bytes = 30'000'000;
        b.major_faults = 4;
        b.minor_faults = 1000;
        b.records = 2'000'000;
        b.bytes = 200'000'000;
    }
};

// This process's user CPU time so far, as getrusage counts it.
uint64_t user_cpu_us() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);  // cannot fail for RUSAGE_SELF and a valid buffer
    return static_cast<uint64_t>(ru.ru_utime.tv_sec) * 1'000'000 +
           static_cast<uint64_t>(ru.ru_utime.tv_usec);
}

// Spins until this process has used `us` more microseconds of user CPU: a count of CPU time,
// not of wall time, so a loaded host makes it longer, never shorter.
void burn_user_cpu(uint64_t us) {
    const uint64_t until = user_cpu_us() + us;
    volatile uint64_t sink = 1;
    while (user_cpu_us() < until) {
        for (int i = 0; i < 100000; ++i) sink = sink * 6364136223846793005ULL + 1;
    }
}

// A file in the current directory (the build directory under `meson test`), removed at scope
// end.
class ScratchFile {
  public:
    ScratchFile() {
        std::string templ = "counters-write-XXXXXX";
        fd_ = ::mkstemp(templ.data());
        REQUIRE(fd_ >= 0);
        path_ = templ;
    }
    ~ScratchFile() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    ScratchFile(const ScratchFile &) = delete;
    ScratchFile &operator=(const ScratchFile &) = delete;
    int fd() const { return fd_; }
    const std::string &path() const { return path_; }

  private:
    int fd_ = -1;
    std::string path_;
};

void write_and_sync(int fd, std::size_t bytes) {
    std::vector<char> block(1 << 20);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
    for (std::size_t done = 0; done < bytes; done += block.size()) {
        REQUIRE(::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()));
    }
    REQUIRE(::fsync(fd) == 0);
}

}  // namespace

TEST_CASE("rates divide each counter's growth by the interval", "[counters]") {
    const TwoSamples t;
    const viaduct::CounterRates r = viaduct::rates(t.a, t.b);
    CHECK(r.seconds == Approx(2.0));
    CHECK(r.proc_user == Approx(0.75));
    CHECK(r.proc_sys == Approx(0.25));
    CHECK(r.proc_cpu == Approx(1.0));
    CHECK(r.host_busy == Approx(2.5 / 4));
    CHECK(r.host_iowait == Approx(0.4 / 4));
    CHECK(r.host_steal == Approx(0.1 / 4));
    CHECK(r.other_cpu == Approx(0.5 / 4));  // busy 2.5 CPU-seconds, this process's 2
    CHECK(r.proc_read_mb_s == Approx(10.0));
    CHECK(r.proc_write_mb_s == Approx(20.0));
    CHECK(r.dev_read_mb_s == Approx(30.0));
    CHECK(r.dev_write_mb_s == Approx(40.0));
    CHECK(r.dev_busy == Approx(0.5));
    CHECK(r.net_sent_mb_s == Approx(5.0));
    CHECK(r.net_received_mb_s == Approx(15.0));
    CHECK(r.major_faults_s == Approx(2.0));
    CHECK(r.minor_faults_s == Approx(500.0));
    CHECK(r.records_s == Approx(1'000'000.0));
    CHECK(r.mb_s == Approx(100.0));
}

TEST_CASE("rates over an interval that is not positive are all zero", "[counters]") {
    TwoSamples t;
    const auto all_zero = [](const viaduct::CounterRates &r) {
        return r.seconds == 0 && r.proc_cpu == 0 && r.host_busy == 0 && r.other_cpu == 0 &&
               r.proc_write_mb_s == 0 && r.dev_busy == 0 && r.records_s == 0 && r.mb_s == 0;
    };
    CHECK(all_zero(viaduct::rates(t.a, t.a)));  // the same instant
    CHECK(all_zero(viaduct::rates(t.b, t.a)));  // the wrong way round
    t.b.time_us = t.a.time_us;
    CHECK(all_zero(viaduct::rates(t.a, t.b)));
}

TEST_CASE("a counter that went backwards grew by nothing, not by a wrapped amount", "[counters]") {
    TwoSamples t;
    t.a.dev_write_bytes = t.b.dev_write_bytes + 1;  // the device was reset in between
    t.a.records = std::numeric_limits<uint64_t>::max();
    t.a.proc_sys_us = t.b.proc_sys_us + 10;
    const viaduct::CounterRates r = viaduct::rates(t.a, t.b);
    CHECK(r.dev_write_mb_s == 0);
    CHECK(r.records_s == 0);
    CHECK(r.proc_sys == 0);
    CHECK(r.proc_cpu == Approx(0.75));
    CHECK(r.dev_read_mb_s == Approx(30.0));  // the others are untouched
}

TEST_CASE("the other processes' share is never negative", "[counters]") {
    TwoSamples t;
    // The process's times read a moment after the host's: more than the host's busy time.
    t.b.proc_user_us = t.a.proc_user_us + 3'000'000;
    const viaduct::CounterRates r = viaduct::rates(t.a, t.b);
    CHECK(r.other_cpu == 0);
    CHECK(r.host_busy == Approx(2.5 / 4));
    // No host time at all (a /proc/stat that could not be read) gives no shares.
    t.b.host_user_us = t.b.host_sys_us = t.b.host_idle_us = t.b.host_iowait_us = t.b.host_steal_us =
        0;
    const viaduct::CounterRates none = viaduct::rates(t.a, t.b);
    CHECK(none.host_busy == 0);
    CHECK(none.other_cpu == 0);
}

TEST_CASE("this process's start is in the past, after the machine booted", "[counters]") {
    timespec real{}, boot{};
    REQUIRE(::clock_gettime(CLOCK_REALTIME, &real) == 0);
    REQUIRE(::clock_gettime(CLOCK_BOOTTIME, &boot) == 0);
    const int64_t now_us = int64_t(real.tv_sec) * 1000000 + real.tv_nsec / 1000;
    const int64_t booted_us = now_us - (int64_t(boot.tv_sec) * 1000000 + boot.tv_nsec / 1000);
    const int64_t started = viaduct::process_started_realtime_us();
    // starttime counts clock ticks: a tick's rounding either way.
    CHECK(started <= now_us + 20000);
    CHECK(started >= booted_us - 20000);
}

TEST_CASE("/proc/self/stat is parsed after the last ')' of the command name", "[counters]") {
    // comm "a) (b c)": spaces and parentheses of its own. Fields from proc(5), with a tpgid,
    // a priority and a nice that are negative.
    const std::string text =
        "1234 (a) (b c)) S 1 1234 1234 0 -1 4194304 500 7 3 0 250 75 0 0 20 -5 1 0 100 "
        "1000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    CounterSample s;
    REQUIRE(viaduct::counters_parse::proc_self_stat(text, 100, 4096, s));
    CHECK(s.minor_faults == 500);
    CHECK(s.major_faults == 3);
    CHECK(s.proc_user_us == 2'500'000);  // 250 ticks of 10 ms
    CHECK(s.proc_sys_us == 750'000);
    CHECK(s.rss_bytes == 300 * 4096);

    CounterSample untouched;
    untouched.minor_faults = 42;
    CHECK_FALSE(
        viaduct::counters_parse::proc_self_stat("1234 (no close S 1 2", 100, 4096, untouched));
    CHECK_FALSE(viaduct::counters_parse::proc_self_stat("1234 (x) S 1 2 3", 100, 4096, untouched));
    CHECK_FALSE(viaduct::counters_parse::proc_self_stat("", 100, 4096, untouched));
    CHECK(untouched.minor_faults == 42);
}

TEST_CASE("/proc/stat's cpu line, /proc/self/io and a disk's stat file are parsed", "[counters]") {
    namespace parse = viaduct::counters_parse;
    CounterSample s;
    REQUIRE(
        parse::host_stat("cpu  100 20 30 400 50 6 4 2 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", 100, s));
    CHECK(s.host_user_us == 1'200'000);  // user + nice
    CHECK(s.host_sys_us == 400'000);     // system + irq + softirq
    CHECK(s.host_idle_us == 4'000'000);
    CHECK(s.host_iowait_us == 500'000);
    CHECK(s.host_steal_us == 20'000);
    CHECK_FALSE(parse::host_stat("cpu0 1 2 3 4 5 6 7 8\n", 100, s));

    // A process bound to CPUs 1 and 3 (msgrun --bind-to core) shares only those: their lines,
    // summed, and nothing of the others or of the total line.
    const std::string four =
        "cpu  1000 0 1000 1000 1000 0 0 0\ncpu0 1 0 0 0 0 0 0 0\n"
        "cpu1 10 1 20 300 4 5 6 7\ncpu2 2 0 0 0 0 0 0 0\n"
        "cpu3 100 0 0 200 0 0 0 1\nintr 12 3 4\n";
    CounterSample bound;
    bound.cpus = 4;
    REQUIRE(parse::host_stat(four, 100, bound, {1, 3}));
    CHECK(bound.cpus == 2);
    CHECK(bound.host_user_us == 1'110'000);  // (10 + 1 + 100) ticks
    CHECK(bound.host_sys_us == 310'000);     // (20 + 5 + 6) ticks
    CHECK(bound.host_idle_us == 5'000'000);
    CHECK(bound.host_iowait_us == 40'000);
    CHECK(bound.host_steal_us == 80'000);
    // A CPU whose line is missing (or a list naming one twice) is not a partial sum.
    CounterSample missing;
    CHECK_FALSE(parse::host_stat(four, 100, missing, {1, 7}));
    CHECK(missing.host_user_us == 0);
    CHECK_FALSE(parse::host_stat(four, 100, missing, {1, 1}));

    REQUIRE(
        parse::proc_io("rchar: 9\nwchar: 8\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\n"
                       "write_bytes: 8192\ncancelled_write_bytes: 12288\n",
                       s));
    CHECK(s.proc_read_bytes == 4096);
    CHECK(s.proc_write_bytes == 8192);  // not cancelled_write_bytes
    CHECK_FALSE(parse::proc_io("", s));

    REQUIRE(
        parse::block_stat("    1000  10  8000  50   2000  20  16000  90    3   700  900 "
                          "0 0 0 0\n",
                          s));
    CHECK(s.dev_read_bytes == 8000 * 512);
    CHECK(s.dev_write_bytes == 16000 * 512);
    CHECK(s.dev_in_flight == 3);
    CHECK(s.dev_busy_us == 700'000);
    CHECK_FALSE(parse::block_stat("1 2 3\n", s));
}

TEST_CASE("read_counters reads this process and host, and a missing device is zeros",
          "[counters]") {
    const CounterSample a = viaduct::read_counters("");
    CHECK(a.time_us > 0);
    CHECK(a.cpus >= 1);
    CHECK(a.host_user_us + a.host_sys_us + a.host_idle_us > 0);
    CHECK(a.rss_bytes > 0);
    CHECK(a.minor_faults > 0);  // a running program has touched pages
    CHECK(a.dev_read_bytes == 0);
    CHECK(a.phase == 0);
    CHECK(a.records == 0);
    const CounterSample b = viaduct::read_counters("no-such-device");
    CHECK(b.time_us >= a.time_us);
    CHECK(b.proc_user_us + b.proc_sys_us >= a.proc_user_us + a.proc_sys_us);
    CHECK(b.host_idle_us >= a.host_idle_us);
    CHECK(b.dev_read_bytes == 0);
    CHECK(b.dev_write_bytes == 0);
    CHECK(b.dev_busy_us == 0);
    // A name that would leave /sys/block is not read.
    const CounterSample c = viaduct::read_counters("../../proc/self");
    CHECK(c.dev_read_bytes == 0);
    CHECK(c.dev_busy_us == 0);
}

TEST_CASE("CPU time this process spends shows in its user time", "[counters]") {
    const uint64_t rusage_before = user_cpu_us();
    const CounterSample before = viaduct::read_counters("");
    burn_user_cpu(300'000);
    const CounterSample after = viaduct::read_counters("");
    const uint64_t rusage_spent = user_cpu_us() - rusage_before;
    INFO("getrusage: " << rusage_spent << " us of user time; /proc/self/stat: "
                       << after.proc_user_us - before.proc_user_us << " us");
    REQUIRE(after.proc_user_us >= before.proc_user_us);
    // Both come from the kernel's accounting of this process; /proc counts in clock ticks.
    CHECK(after.proc_user_us - before.proc_user_us >= rusage_spent / 2);
    // The host was busy at least as long as this process (it is one of the host's processes).
    CHECK((after.host_user_us + after.host_sys_us) - (before.host_user_us + before.host_sys_us) >=
          rusage_spent / 2);
}

TEST_CASE("bytes this process writes show in its and its disk's counters", "[counters]") {
    constexpr std::size_t kBytes = 4 << 20;
    ScratchFile file;
    const std::string device = viaduct::block_device_for(file.path());
    const bool have_io = ::access("/proc/self/io", R_OK) == 0;
    const CounterSample before = viaduct::read_counters(device);
    write_and_sync(file.fd(), kBytes);
    const CounterSample after = viaduct::read_counters(device);
    if (have_io) {
        // Accounted as the pages are dirtied, on any file system that writes back to storage.
        if (!device.empty()) {
            CHECK(after.proc_write_bytes - before.proc_write_bytes >= kBytes);
        } else {
            WARN("the build directory is on no block device: its write bytes are not checked");
            CHECK(after.proc_write_bytes >= before.proc_write_bytes);
        }
    } else {
        WARN("/proc/self/io is missing (no task I/O accounting): the write bytes stay 0");
        CHECK(after.proc_write_bytes == 0);
    }
    if (!device.empty()) {
        // fsync sent the file to the disk; other writers only add to the count.
        CHECK(after.dev_write_bytes - before.dev_write_bytes >= kBytes);
        CHECK(after.dev_busy_us >= before.dev_busy_us);
    } else {
        CHECK(after.dev_write_bytes == 0);
    }
}

TEST_CASE("block_device_for names a disk under /sys/block, or none", "[counters]") {
    const std::string root = viaduct::block_device_for("/");
    if (root.empty()) {
        WARN("'/' is on no block device here (an overlay or tmpfs root)");
    } else {
        CHECK(root.find('/') == std::string::npos);
        CHECK(::access(("/sys/block/" + root + "/stat").c_str(), R_OK) == 0);
        // A whole disk, not a partition of one.
        CHECK(::access(("/sys/block/" + root + "/partition").c_str(), F_OK) != 0);
        const CounterSample s = viaduct::read_counters(root);
        CHECK(s.dev_read_bytes > 0);  // the root file system was read to start this program
    }
    CHECK(viaduct::block_device_for("/proc").empty());
    CHECK(viaduct::block_device_for("/proc/self/stat").empty());
    CHECK(viaduct::block_device_for("/no/such/path").empty());
}

TEST_CASE("a sampler's rate, ring and device are checked", "[sampler]") {
    const auto make = [](double hz, std::size_t capacity, std::string device = "") {
        Sampler s(hz, capacity, std::move(device), nullptr);
    };
    CHECK_THROWS_WITH(make(0, 10), Contains("rate 0 Hz"));
    CHECK_THROWS_WITH(make(-5, 10), Contains("rate -5 Hz"));
    CHECK_THROWS_WITH(make(1001, 10), Contains("rate 1001 Hz"));
    CHECK_THROWS_AS(make(std::nan(""), 10), std::invalid_argument);
    CHECK_THROWS_AS(make(std::numeric_limits<double>::infinity(), 10), std::invalid_argument);
    CHECK_THROWS_WITH(make(10, 1), Contains("1 samples"));
    CHECK_THROWS_WITH(make(10, 10, "../sda"), Contains("'../sda'"));
    CHECK_NOTHROW(make(1000, 2));
    CHECK_NOTHROW(make(0.001, 2, "no-such-device"));
}

TEST_CASE("the ring keeps the newest samples in time order and counts the dropped", "[sampler]") {
    uint64_t calls = 0;  // only this thread samples: no sampler thread is started
    Sampler sampler(10, 3, "", [&calls] {
        ++calls;
        return Sampler::Progress{static_cast<uint32_t>(calls % 4), calls, 100 * calls, 0, 0};
    });
    CHECK(sampler.samples().empty());
    CHECK_FALSE(sampler.latest().has_value());
    CHECK(sampler.capacity() == 3);
    for (int i = 0; i < 2; ++i) sampler.sample_now();
    CHECK(sampler.samples().size() == 2);
    CHECK(sampler.dropped() == 0);
    for (int i = 0; i < 5; ++i) sampler.sample_now();
    const std::vector<CounterSample> ring = sampler.samples();
    REQUIRE(ring.size() == 3);
    CHECK(sampler.dropped() == 4);
    for (std::size_t i = 0; i < ring.size(); ++i) {
        CHECK(ring[i].records == 5 + i);  // samples 5, 6 and 7 of 7
        CHECK(ring[i].bytes == 100 * (5 + i));
        CHECK(ring[i].phase == (5 + i) % 4);
        if (i > 0) CHECK(ring[i].time_us >= ring[i - 1].time_us);
    }
    REQUIRE(sampler.latest().has_value());
    CHECK(sampler.latest()->records == 7);

    // By number: samples 0..3 were dropped, 4..6 (records 5..7) are held.
    uint64_t from = 0, end = 0;
    std::vector<CounterSample> got = sampler.samples_from(0, 10, &from, &end);
    CHECK(from == 4);
    CHECK(end == 7);
    REQUIRE(got.size() == 3);
    CHECK(got[0].records == 5);
    got = sampler.samples_from(5, 1, &from, &end);
    CHECK(from == 5);
    REQUIRE(got.size() == 1);
    CHECK(got[0].records == 6);
    got = sampler.samples_from(9, 10, &from, &end);  // past the newest: none, from clamped
    CHECK(got.empty());
    CHECK(from == 7);
    CHECK(end == 7);
}

TEST_CASE("a started sampler has a first and a last sample with the program's progress",
          "[sampler]") {
    std::atomic<int> calls{0};
    const Sampler::Progress progress{7, 11, 13, 17, 19};
    // A ring far larger than the samples a stalled host could add between start() and stop().
    Sampler sampler(10, 100'000, "", [&] {
        calls.fetch_add(1);
        return progress;
    });
    sampler.start();
    sampler.start();  // already started: nothing more
    sampler.stop();
    const std::vector<CounterSample> ring = sampler.samples();
    REQUIRE(ring.size() >= 2);
    CHECK(ring.size() == static_cast<std::size_t>(calls.load()));
    for (std::size_t i = 0; i < ring.size(); ++i) {
        CHECK(ring[i].phase == 7);
        CHECK(ring[i].records == 11);
        CHECK(ring[i].bytes == 13);
        CHECK(ring[i].net_sent_bytes == 17);
        CHECK(ring[i].net_received_bytes == 19);
        CHECK(ring[i].cpus >= 1);
        if (i > 0) CHECK(ring[i].time_us >= ring[i - 1].time_us);
    }
    sampler.stop();  // stopped already: no further sample
    CHECK(sampler.samples().size() == ring.size());
    sampler.start();  // and it starts again
    sampler.stop();
    CHECK(sampler.samples().size() >= ring.size() + 2);
}

TEST_CASE("stop wakes the sampler between ticks, and the destructor stops it", "[sampler]") {
    // A 100-second period: stop() returning at all shows the wait was cut short (the test's
    // own timeout is shorter than one period).
    {
        Sampler sampler(0.01, 4, "", nullptr);
        sampler.start();
        sampler.stop();
        CHECK(sampler.samples().size() == 2);
    }
    Sampler unstopped(0.01, 4, "", nullptr);
    unstopped.start();
    CHECK(unstopped.samples().size() == 1);
}  // ~Sampler stops `unstopped`

TEST_CASE("what the progress function throws comes out of start or stop", "[sampler]") {
    std::atomic<int> calls{0};
    Sampler sampler(1000, 8, "", [&calls]() -> Sampler::Progress {
        if (calls.fetch_add(1) > 0) throw std::runtime_error("progress unavailable");
        return {};
    });
    sampler.start();
    // From the sampler's thread or from the last sample, whichever called it first.
    CHECK_THROWS_WITH(sampler.stop(), "progress unavailable");
    CHECK_NOTHROW(sampler.stop());  // stopped: nothing left to report
    CHECK_THROWS_WITH(sampler.start(), "progress unavailable");
    CHECK_NOTHROW(sampler.stop());  // start() failed before any thread was started
}
