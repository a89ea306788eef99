// The trace file format is libmsg's (libmsg/src/protocol/message_trace.cpp):
//   # viaduct-trace 1
//   # rank R size N clock_monotonic_ns M clock_realtime_ns W
//   rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status
//   records...
//   # end records K dropped D
// A file without its end line, or whose count disagrees, was cut short and is refused.
#include "traffic/replay_trace.hpp"

#include <glob.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sansim {
namespace {

constexpr std::string_view kColumns = "rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status";
// Times past this (about 11 days after the file's start) would overflow simulated time.
constexpr std::int64_t kMaxSpanNs = std::int64_t{1} << 50;

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t at = s.find(sep, start);
        out.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
        if (at == std::string_view::npos) return out;
        start = at + 1;
    }
}

// Reads one line at a time and names the place of every error.
class Reader {
  public:
    Reader(std::string_view text, const std::string &name) : text_(text), name_(name) {}
    bool next(std::string_view *line) {
        if (pos_ >= text_.size()) return false;
        std::size_t end = text_.find('\n', pos_);
        if (end == std::string_view::npos) end = text_.size();
        *line = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        ++line_no_;
        if (line->size() > kTraceMaxLine) fail("line longer than 4096 bytes");
        if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
        return true;
    }
    [[noreturn]] void fail(const std::string &why) const {
        throw TraceError(name_ + ":" + std::to_string(line_no_) + ": " + why);
    }
    template <typename T>
    T number(std::string_view s, const char *what, T lo, T hi) const {
        T v{};
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
            fail(std::string(what) + " '" + std::string(s.substr(0, 40)) + "' is not a number");
        if (v < lo || v > hi) fail(std::string(what) + " " + std::to_string(v) + " out of range");
        return v;
    }

  private:
    std::string_view text_;
    const std::string &name_;
    std::size_t pos_ = 0;
    int line_no_ = 0;
};

struct Header {
    int rank = 0, size = 0;
    std::int64_t mono0 = 0, wall0 = 0;
};

Header read_header(Reader &in) {
    std::string_view line;
    if (!in.next(&line)) in.fail("empty file, not a viaduct trace");
    if (line.rfind("# viaduct-trace ", 0) != 0)
        in.fail("not a viaduct trace (no '# viaduct-trace')");
    if (line != "# viaduct-trace 1")
        in.fail("unsupported trace version '" + std::string(line) + "'");
    if (!in.next(&line)) in.fail("truncated: no '# rank' line");
    const auto w = split(line, ' ');
    if (w.size() != 9 || w[0] != "#" || w[1] != "rank" || w[3] != "size" ||
        w[5] != "clock_monotonic_ns" || w[7] != "clock_realtime_ns")
        in.fail("expected '# rank R size N clock_monotonic_ns M clock_realtime_ns W'");
    Header h;
    h.size = in.number<int>(w[4], "size", 1, kTraceMaxRanks);
    h.rank = in.number<int>(w[2], "rank", 0, h.size - 1);
    h.mono0 = in.number<std::int64_t>(w[6], "clock_monotonic_ns", 0, INT64_MAX / 2);
    h.wall0 = in.number<std::int64_t>(w[8], "clock_realtime_ns", 0, INT64_MAX / 2);
    if (!in.next(&line)) in.fail("truncated: no column line");
    if (line != kColumns) in.fail("expected the column line '" + std::string(kColumns) + "'");
    return h;
}

TraceProtocol protocol_of(const Reader &in, std::string_view s) {
    if (s == "eager") return TraceProtocol::eager;
    if (s == "self") return TraceProtocol::self;
    if (s == "send_recv") return TraceProtocol::send_recv;
    if (s == "rdma_read") return TraceProtocol::rdma_read;
    if (s == "rdma_write") return TraceProtocol::rdma_write;
    in.fail("unknown protocol '" + std::string(s.substr(0, 40)) +
            "' (eager, self, send_recv, rdma_read, rdma_write)");
}

// libmsg writes a receive that never matched a message (withdrawn at finalize, or failed
// for lack of a sender) with the wildcards it was posted with: peer -1 (any source) and
// perhaps tag -1 (any tag). Such a record is no message, so the reader checks and skips it.
bool withdrawn_receive(const Reader &in, const std::vector<std::string_view> &f) {
    const bool wildcard = f[2] == "-1" || f[3] == "-1";
    if (!wildcard) return false;
    if (f[1] != "recv")
        in.fail("a send to peer " + std::string(f[2]) + " tag " + std::string(f[3]) +
                ": only a receive can name a wildcard (-1)");
    if (in.number<int>(f[8], "status", -1000, 0) == 0)
        in.fail("a completed receive with peer " + std::string(f[2]) + " tag " + std::string(f[3]) +
                ": a completed receive names its sender and tag");
    return true;
}

// Fills *op from one record line; false for a receive that never matched a message.
bool read_record(const Reader &in, std::string_view line, const Header &h, TraceOp *out) {
    const auto f = split(line, ',');
    if (f.size() != 9)
        in.fail("expected 9 comma-separated fields, found " + std::to_string(f.size()));
    if (in.number<int>(f[0], "rank", 0, kTraceMaxRanks) != h.rank)
        in.fail("record of rank " + std::string(f[0]) + " in the file of rank " +
                std::to_string(h.rank));
    TraceOp op;
    if (f[1] != "send" && f[1] != "recv") in.fail("kind must be send or recv");
    const bool withdrawn = withdrawn_receive(in, f);
    op.send = f[1] == "send";
    op.peer = in.number<int>(f[2], "peer", withdrawn ? -1 : 0, h.size - 1);
    op.tag = in.number<int>(f[3], "tag", withdrawn ? -1 : 0, INT32_MAX);
    op.bytes = in.number<std::uint64_t>(f[4], "bytes", 0, kTraceMaxBytes);
    op.protocol = protocol_of(in, f[5]);
    const auto post = in.number<std::int64_t>(f[6], "post_ns", h.mono0, h.mono0 + kMaxSpanNs);
    const auto done = in.number<std::int64_t>(f[7], "done_ns", post, h.mono0 + kMaxSpanNs);
    op.status = in.number<int>(f[8], "status", -1000, 0);
    op.post_ns = h.wall0 + (post - h.mono0);
    op.done_ns = h.wall0 + (done - h.mono0);
    *out = op;
    return !withdrawn;
}

}  // namespace

const char *trace_protocol_name(TraceProtocol p) {
    switch (p) {
        case TraceProtocol::eager:
            return "eager";
        case TraceProtocol::self:
            return "self";
        case TraceProtocol::send_recv:
            return "send_recv";
        case TraceProtocol::rdma_read:
            return "rdma_read";
        case TraceProtocol::rdma_write:
            return "rdma_write";
    }
    return "?";
}

RankTrace parse_rank_trace(std::string_view text, const std::string &name) {
    Reader in(text, name);
    const Header h = read_header(in);
    RankTrace t;
    t.name = name;
    t.rank = h.rank;
    t.size = h.size;
    std::string_view line;
    bool ended = false;
    while (in.next(&line)) {
        if (ended) {
            if (!line.empty()) in.fail("text after the end line");
            continue;
        }
        if (line.rfind("# end", 0) == 0) {
            const auto w = split(line, ' ');
            if (w.size() != 6 || w[2] != "records" || w[4] != "dropped")
                in.fail("expected '# end records K dropped D'");
            const std::uint64_t records = t.ops.size() + t.withdrawn;
            if (in.number<std::uint64_t>(w[3], "records", 0, kTraceMaxRecords) != records)
                in.fail("the end line counts " + std::string(w[3]) + " records, the file has " +
                        std::to_string(records));
            t.dropped = in.number<std::uint64_t>(w[5], "dropped", 0, UINT64_MAX);
            ended = true;
            continue;
        }
        if (t.ops.size() + t.withdrawn >= kTraceMaxRecords) in.fail("more than 50000000 records");
        TraceOp op;
        if (read_record(in, line, h, &op))
            t.ops.push_back(op);
        else
            ++t.withdrawn;
    }
    if (!ended) in.fail("truncated: no '# end records' line");
    return t;
}

namespace {

// Whether a file starts as a viaduct trace does ("# viaduct-trace "): a directory of a job's
// traces often holds its inputs, outputs and logs too.
bool looks_like_trace(const std::filesystem::path &path) {
    constexpr std::string_view kMagic = "# viaduct-trace ";
    std::ifstream f(path, std::ios::binary);
    char head[kMagic.size()] = {};
    f.read(head, static_cast<std::streamsize>(sizeof head));
    return f.gcount() == static_cast<std::streamsize>(sizeof head) &&
           std::string_view(head, sizeof head) == kMagic;
}

// A directory's trace files; others are left out, and so are the writer's temporaries (hidden
// ".NAME.XXXXXX", or "NAME.tmpPID" from older writers), which may be cut short.
std::vector<std::string> directory_traces(const std::string &dir) {
    std::vector<std::string> files, others;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name.front() == '.' || name.find(".tmp") != std::string::npos)
            continue;
        (looks_like_trace(e.path()) ? files : others).push_back(e.path().string());
    }
    if (ec) throw TraceError(dir + ": cannot list: " + ec.message());
    if (files.empty() && !others.empty()) {
        std::sort(others.begin(), others.end());
        throw TraceError(dir + ": no viaduct trace among its " + std::to_string(others.size()) +
                         " files (" + others.front() + ", ...: a trace starts '# viaduct-trace')");
    }
    return files;
}

std::vector<std::string> trace_files(const std::string &spec) {
    std::vector<std::string> files;
    std::error_code ec;
    if (std::filesystem::is_directory(spec, ec)) {
        files = directory_traces(spec);
    } else {
        glob_t g{};
        const int rc = glob(spec.c_str(), 0, nullptr, &g);
        for (std::size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) files.push_back(g.gl_pathv[i]);
        globfree(&g);
    }
    if (files.empty()) throw TraceError(spec + ": no trace files");
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

std::vector<RankTrace> load_traces(const std::string &spec) {
    std::vector<RankTrace> ranks;
    for (const std::string &path : trace_files(spec)) {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw TraceError(path + ": cannot open");
        std::ostringstream text;
        text << f.rdbuf();
        ranks.push_back(parse_rank_trace(text.str(), path));
    }
    const int size = ranks.front().size;
    std::vector<const RankTrace *> by_rank(static_cast<std::size_t>(size), nullptr);
    for (const RankTrace &t : ranks) {
        if (t.size != size)
            throw TraceError(t.name + ": a job of " + std::to_string(t.size) + " ranks; " +
                             ranks.front().name + " says " + std::to_string(size));
        auto &slot = by_rank[static_cast<std::size_t>(t.rank)];
        if (slot != nullptr)
            throw TraceError(t.name + ": rank " + std::to_string(t.rank) + " again (also " +
                             slot->name + ")");
        slot = &t;
    }
    for (int r = 0; r < size; ++r)
        if (by_rank[static_cast<std::size_t>(r)] == nullptr)
            throw TraceError(spec + ": no trace of rank " + std::to_string(r) + " of " +
                             std::to_string(size));
    std::sort(ranks.begin(), ranks.end(),
              [](const RankTrace &a, const RankTrace &b) { return a.rank < b.rank; });
    return ranks;
}

}  // namespace sansim
