// Registrations kept between long messages (native verbs' registration cache): repeated long
// messages from and into the same buffers are not registered again, and a buffer whose memory
// is unmapped and mapped again, discarded (MADV_DONTNEED) or freed and allocated again moves
// its new bytes, never the old pages a kept registration still pins.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

msg_stats_t stats(const Job &job) {
    msg_stats_t s{};
    WSTATUS(msg_get_stats(job.ctx(), &s), MSG_OK);
    return s;
}

void *map_at(void *hint, size_t len) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (hint != nullptr ? MAP_FIXED_NOREPLACE : 0);
    void *p = mmap(hint, len, PROT_READ | PROT_WRITE, flags, -1, 0);
    WCHECK(p != MAP_FAILED, "mmap of %zu bytes failed", len);
    WCHECK(hint == nullptr || p == hint, "the address came back elsewhere");
    return p;
}

// Rank 0 sends buf to rank 1, which receives into its own buf and checks every byte.
void exchange(const Job &job, void *buf, size_t len, int tag, uint64_t seq, const char *what) {
    if (job.rank == 0) {
        make_message(buf, len, 0, tag, seq);
        WSTATUS(msg_send(job.ctx(), 1, tag, buf, len), MSG_OK);
    } else {
        std::memset(buf, 0xee, len);
        msg_completion_t c{};
        WSTATUS(msg_recv(job.ctx(), 0, tag, buf, len, &c), MSG_OK);
        const size_t got = c.bytes;
        WCHECK(got == len, "%s: received %zu of %zu bytes", what, got, len);
        std::string bad = check_message(buf, len, 0, tag, seq);
        WCHECK(bad.empty(), "%s: %s", what, bad.c_str());
    }
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
}

}  // namespace

// Args: MIB ROUNDS EXPECT_REUSE (1: the transport keeps registrations, check that it does).
void run_registration(const Args &args) {
    Job job;
    WCHECK(job.size == 2, "needs 2 ranks, has %d", job.size);
    const size_t len = parse_size_arg(args, 0, 4) << 20;
    const int rounds = static_cast<int>(parse_size_arg(args, 1, 8));
    const bool expect_reuse = parse_size_arg(args, 2, 0) != 0;
    WCHECK(len > job.info.eager_max, "the message must be long");
    uint64_t seq = 0;

    // The same buffers, again and again.
    void *buf = map_at(nullptr, len);
    msg_stats_t start = stats(job);
    exchange(job, buf, len, 1, seq++, "first message");
    msg_stats_t before = stats(job);
    for (int i = 0; i < rounds; ++i) exchange(job, buf, len, 1, seq++, "repeated message");
    msg_stats_t after = stats(job);
    const uint64_t first = before.memory_registrations - start.memory_registrations;
    const uint64_t again = after.memory_registrations - before.memory_registrations;
    const uint64_t reused = after.registrations_reused - before.registrations_reused;
    say("first message: %llu registrations; %d repeated messages: %llu registrations, %llu "
        "reused",
        static_cast<unsigned long long>(first), rounds, static_cast<unsigned long long>(again),
        static_cast<unsigned long long>(reused));
    if (expect_reuse) {
        // The sender registers its buffer for every long message (the receiver, depending on
        // the protocol); each registration made for the first message is reused after it.
        if (job.rank == 0) WCHECK(first >= 1, "the first long message registered nothing");
        WCHECK(again == 0, "repeated messages registered again (%llu new registrations)",
               static_cast<unsigned long long>(again));
        WCHECK(reused >= first * static_cast<uint64_t>(rounds),
               "kept registrations were reused %llu times, expected at least %llu",
               static_cast<unsigned long long>(reused),
               static_cast<unsigned long long>(first * static_cast<uint64_t>(rounds)));
    }

    // Unmapped and mapped again at the same address: new pages behind the same numbers.
    WCHECK(munmap(buf, len) == 0, "munmap failed");
    buf = map_at(buf, len);
    exchange(job, buf, len, 2, seq++, "buffer mapped again at the same address");

    // Discarded: the next touch brings fresh pages.
    exchange(job, buf, len, 3, seq++, "before MADV_DONTNEED");
    WCHECK(madvise(buf, len, MADV_DONTNEED) == 0, "madvise failed");
    exchange(job, buf, len, 3, seq++, "after MADV_DONTNEED");
    WCHECK(munmap(buf, len) == 0, "munmap failed");

    // Freed and allocated again (glibc serves large blocks with mmap and often at the same
    // address).
    for (int i = 0; i < 4; ++i) {
        void *heap = std::malloc(len);
        WCHECK(heap != nullptr, "malloc failed");
        exchange(job, heap, len, 4, seq++, "malloc'd buffer");
        std::free(heap);
    }
    msg_stats_t end = stats(job);
    say("in all: %llu registrations, %llu reused",
        static_cast<unsigned long long>(end.memory_registrations),
        static_cast<unsigned long long>(end.registrations_reused));
    job.finalize();
}

}  // namespace worker
