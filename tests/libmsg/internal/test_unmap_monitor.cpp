// UnmapMonitor: watched ranges that are unmapped, discarded or moved are reported, touching
// discarded pages does not hang, ranges it cannot watch say so, and a flood of changes ends in
// one report covering everything.
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "common/unmap_monitor.hpp"

namespace {

using msg::UnmapMonitor;

constexpr size_t kLen = 1 << 20;

char *map_touched(size_t len) {
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    std::memset(p, 0x5a, len);
    return static_cast<char *>(p);
}

bool watch(UnmapMonitor &m, const void *p, size_t len) {
    auto b = reinterpret_cast<uintptr_t>(p);
    return m.watch(b, b + len);
}

// True if a range reported since the last call overlaps [p, p + len).
bool reported(UnmapMonitor &m, const void *p, size_t len) {
    auto b = reinterpret_cast<uintptr_t>(p), e = b + len;
    bool hit = false;
    m.drain([&](UnmapMonitor::Range r) { hit = hit || (r.begin < e && b < r.end); });
    return hit;
}

}  // namespace

TEST_CASE("watched memory that is unmapped is reported", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    char *a = map_touched(kLen);
    char *b = map_touched(kLen);
    REQUIRE(watch(m, a, kLen));
    CHECK_FALSE(reported(m, a, kLen));
    REQUIRE(munmap(a, kLen) == 0);
    CHECK(reported(m, a, kLen));
    // Unwatched memory changes silently.
    REQUIRE(munmap(b, kLen) == 0);
    CHECK_FALSE(reported(m, b, kLen));
}

TEST_CASE("discarded pages are reported and can be touched again", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    char *a = map_touched(kLen);
    REQUIRE(watch(m, a, kLen));
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    REQUIRE(madvise(a + 4 * page, 2 * page, MADV_DONTNEED) == 0);
    CHECK(reported(m, a + 4 * page, 2 * page));
    CHECK_FALSE(reported(m, a, kLen));
    // Fresh zero pages, from this thread and from the kernel (read into it).
    CHECK(a[4 * page] == 0);
    a[5 * page] = 7;
    CHECK(a[5 * page] == 7);
    REQUIRE(madvise(a, kLen, MADV_DONTNEED) == 0);
    FILE *f = std::tmpfile();
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite("viaduct", 1, 7, f) == 7);
    std::rewind(f);
    REQUIRE(read(fileno(f), a + 8 * page, 7) == 7);
    CHECK(std::memcmp(a + 8 * page, "viaduct", 7) == 0);
    std::fclose(f);
    munmap(a, kLen);
}

TEST_CASE("watched memory that moves is reported at its old address", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    char *a = map_touched(kLen);
    REQUIRE(watch(m, a, kLen));
    void *moved = mremap(a, kLen, 2 * kLen, MREMAP_MAYMOVE);
    REQUIRE(moved != MAP_FAILED);
    if (moved != a) CHECK(reported(m, a, kLen));
    munmap(moved, 2 * kLen);
}

TEST_CASE("freed heap blocks are reported", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    // Large enough for glibc to serve with its own mapping and unmap on free.
    const size_t len = 8 << 20;
    auto *p = static_cast<char *>(std::malloc(len));
    REQUIRE(p != nullptr);
    std::memset(p, 1, len);
    REQUIRE(watch(m, p, len));
    std::free(p);
    // glibc unmaps such a block at once; a sanitizer's allocator may keep it mapped (in
    // quarantine), and then there is nothing to report.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    auto first = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    std::vector<unsigned char> vec(len / page + 2);
    const bool unmapped = mincore(reinterpret_cast<void *>(first), len, vec.data()) != 0;
    if (unmapped) {
        CHECK(reported(m, p, len));
    } else {
        WARN("the allocator kept the freed block mapped: nothing to report");
    }
}

TEST_CASE("file mappings cannot be watched", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    FILE *f = std::tmpfile();
    REQUIRE(f != nullptr);
    REQUIRE(ftruncate(fileno(f), 1 << 16) == 0);
    void *p = mmap(nullptr, 1 << 16, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    REQUIRE(p != MAP_FAILED);
    CHECK_FALSE(watch(m, p, 1 << 16));
    munmap(p, 1 << 16);
    std::fclose(f);
}

TEST_CASE("more changes than can be recorded report everything", "[unmap_monitor]") {
    UnmapMonitor m;
    std::string why;
    REQUIRE(m.start(&why));
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t pages = 2000;
    char *a = map_touched(pages * page);
    REQUIRE(watch(m, a, pages * page));
    // Two threads discarding every other page: each page is its own event.
    auto discard = [&](size_t first) {
        for (size_t i = first; i < pages; i += 2) madvise(a + i * page, page, MADV_DONTNEED);
    };
    std::thread t1(discard, 0), t2(discard, 1);
    t1.join();
    t2.join();
    // Every discarded page is its own event (a discard can race with the monitor unwatching a
    // neighbour, so allow a few to go unseen): far more than the monitor records one by one.
    CHECK(m.events() >= pages / 2);
    int calls = 0;
    bool everything = false;
    m.drain([&](UnmapMonitor::Range r) {
        ++calls;
        everything = r.begin == 0 && r.end == UINTPTR_MAX;
    });
    CHECK(calls == 1);
    CHECK(everything);
    CHECK_FALSE(reported(m, a, pages * page));
    munmap(a, pages * page);
}
