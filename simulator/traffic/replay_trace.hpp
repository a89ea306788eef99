// Reading libmsg's message traces (VIADUCT_TRACE, one CSV file per rank) for the replay
// workload. Files are treated as hostile: every malformed line is a TraceError naming the
// file, the line and what is wrong, and sizes are bounded.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sansim {

struct TraceError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

enum class TraceProtocol { eager, self, send_recv, rdma_read, rdma_write };

struct TraceOp {
    bool send = false;
    int peer = 0, tag = 0, status = 0;
    std::uint64_t bytes = 0;
    TraceProtocol protocol = TraceProtocol::eager;
    // Wall-clock ns: the file's CLOCK_MONOTONIC stamps moved onto its CLOCK_REALTIME epoch,
    // so files written on one host (or on hosts with synchronized clocks) share a time line.
    std::int64_t post_ns = 0, done_ns = 0;
};

struct RankTrace {
    std::string name;  // the file, for messages
    int rank = 0, size = 0;
    std::uint64_t dropped = 0;    // records the writer's cap left out
    std::uint64_t withdrawn = 0;  // receives that matched no message (peer or tag -1): skipped
    std::vector<TraceOp> ops;     // in file order
};

// Limits on what a trace may hold (a file past them is refused, not truncated).
constexpr std::size_t kTraceMaxLine = 4096;
constexpr std::size_t kTraceMaxRecords = 50'000'000;
constexpr int kTraceMaxRanks = 1 << 16;
constexpr std::uint64_t kTraceMaxBytes = std::uint64_t{1} << 40;  // one message: 1 TiB

// One file's text; `name` prefixes every error ("name:line: problem").
RankTrace parse_rank_trace(std::string_view text, const std::string &name);

// spec: a directory (its regular files that start "# viaduct-trace "; other files, hidden
// ones and names with ".tmp", the writer's temporaries, are ignored), or a path or glob
// pattern. The files must be one job's: the same size, each rank once, every rank present.
std::vector<RankTrace> load_traces(const std::string &spec);

const char *trace_protocol_name(TraceProtocol p);

}  // namespace sansim
