// Fuzz target: sansim's reader of libmsg message traces (the replay workload's input). Every
// input either parses into records the replay can use or fails with the file's name.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "traffic/replay_trace.hpp"

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_replay_trace: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    sansim::RankTrace t;
    try {
        t = sansim::parse_rank_trace(text, "fuzz.csv");
    } catch (const sansim::TraceError &e) {
        if (std::string(e.what()).rfind("fuzz.csv:", 0) != 0)
            broken("an error without the file name");
        return 0;
    }
    if (t.size < 1 || t.rank < 0 || t.rank >= t.size) broken("an impossible rank accepted");
    for (const auto &op : t.ops) {
        if (op.peer < 0 || op.peer >= t.size) broken("a peer outside the job accepted");
        if (op.done_ns < op.post_ns) broken("a completion before its post accepted");
        if (op.bytes > (std::uint64_t{1} << 40)) broken("an impossible size accepted");
    }
    return 0;
}
