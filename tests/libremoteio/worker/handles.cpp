// Scenario "handles" (2 ranks): rank 0 exports several ranges; rank 1 learns
// two handles and checks that they are not neighbours and that guesses made
// from them (the next and previous values), 0 and a random value are all
// refused, while the real handles still read.
#include <sys/random.h>

#include <set>

#include "scenarios.hpp"

namespace riotest {

namespace {

constexpr uint64_t kHandlesSeed = 777;
constexpr size_t kFile = 65536;
constexpr int kExports = 16;

}  // namespace

void run_handles(const Args &) {
    Node node;
    WCHECK(node.size() == 2, "handles needs 2 ranks, not %d", node.size());
    const int me = node.rank();
    std::unique_ptr<ScratchFile> file;
    uint64_t first = 0, second = 0;
    if (me == 0) {
        file = std::make_unique<ScratchFile>("handles", kFile, kHandlesSeed);
        std::set<uint64_t> seen;
        for (int i = 0; i < kExports; ++i) {
            uint64_t h = 0;
            RSTATUS(rio_export(node.rio(), file->path().c_str(), 0, RIO_EXPORT_TO_END,
                               RIO_EXPORT_READ_ONLY, &h),
                    RIO_OK);
            WCHECK(h != 0, "export %d got handle 0", i);
            WCHECK(seen.insert(h).second, "export %d got a handle already given", i);
            if (i == 0) first = h;
            if (i == 1) second = h;
        }
        // No two handles given are neighbours: one does not lead to another.
        for (uint64_t h : seen)
            WCHECK(seen.count(h + 1) == 0, "handles %llx and %llx are consecutive",
                   static_cast<unsigned long long>(h), static_cast<unsigned long long>(h + 1));
    }
    first = exchange_handles(node, first)[0];
    second = exchange_handles(node, second)[0];
    if (me == 1) {
        WCHECK(second != first + 1 && first != second + 1,
               "two exports' handles are consecutive: %llx, %llx",
               static_cast<unsigned long long>(first), static_cast<unsigned long long>(second));
        std::vector<uint8_t> buf(100);
        size_t moved = 0;
        RSTATUS(rio_read_sync(node.rio(), 0, first, 0, buf.data(), buf.size(), &moved), RIO_OK);
        WCHECK(check_pattern(buf.data(), buf.size(), kHandlesSeed) == buf.size(),
               "read by a real handle");
        RSTATUS(rio_read_sync(node.rio(), 0, second, 0, buf.data(), buf.size(), &moved), RIO_OK);
        uint64_t random = 0;
        WCHECK(getrandom(&random, sizeof random, 0) == sizeof random, "getrandom");
        // Guesses a peer could make from the handles it was given, or from nothing.
        for (uint64_t guess : {second + 1, second - 1, first + 1, first - 1, uint64_t{0},
                               uint64_t{1}, random, random + 1}) {
            if (guess == first || guess == second) continue;
            RSTATUS(rio_read_sync(node.rio(), 0, guess, 0, buf.data(), buf.size(), &moved),
                    RIO_ERR_BAD_HANDLE);
            uint64_t len = 0;
            RSTATUS(rio_stat(node.rio(), 0, guess, &len, nullptr), RIO_ERR_BAD_HANDLE);
        }
        worker::say("handles: %llx and %llx apart; guesses refused",
                    static_cast<unsigned long long>(first),
                    static_cast<unsigned long long>(second));
    }
    node.finalize();
}

}  // namespace riotest
