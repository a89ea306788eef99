// Trace replay: lines of "time_us src dst bytes kind", kind send (a message through the
// message layer), read or write (a raw BTE transfer). '#' starts a comment. Every field is
// checked and bounded, and an error names the file and line.
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "traffic/workload.hpp"

namespace sansim {
namespace {

struct Record {
    Time at;
    int src, dst;
    std::uint64_t bytes;
    char kind;  // 's', 'r', 'w'
};

// A trace's own limits: past them a record is refused, not silently wrapped or clipped.
constexpr double kMaxTraceUs = 1e12;                              // about 11.6 days
constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{1} << 40;  // 1 TiB, as --message-bytes

// One line's fields, each checked with the file and line in every message.
class TraceLine {
  public:
    TraceLine(std::string where, double reach_us) : where_(std::move(where)), reach_(reach_us) {}
    [[noreturn]] void fail(const std::string &why) const {
        throw std::invalid_argument(where_ + why);
    }
    double time_us(const std::string &s) const {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
            fail("time_us '" + s.substr(0, 40) + "' is not a finite number");
        if (v < 0) fail("time_us " + s + " is negative");
        if (v > kMaxTraceUs) fail("time_us " + s + " is past the limit of 1e12 us");
        if (v > reach_)
            fail("time_us " + s + " is past the " + std::to_string(static_cast<long>(reach_)) +
                 " us that 10^7 bins of the NICs' time series reach: raise --series-bin-us");
        return v;
    }
    std::uint64_t integer(const std::string &s, const char *what, std::uint64_t hi) const {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size())
            fail(std::string(what) + " '" + s.substr(0, 40) + "' is not a whole number");
        if (v > hi)
            fail(std::string(what) + " " + s + " is above the limit of " + std::to_string(hi));
        return v;
    }

  private:
    std::string where_;
    double reach_;
};

Record read_record(const std::vector<std::string> &f, const TraceLine &in, int nodes) {
    if (f.size() != 5)
        in.fail("expected 5 fields (time_us src dst bytes send|read|write), found " +
                std::to_string(f.size()));
    Record r{};
    r.at = from_us(in.time_us(f[0]));
    const auto last = static_cast<std::uint64_t>(nodes - 1);
    r.src = static_cast<int>(in.integer(f[1], "src", last));
    r.dst = static_cast<int>(in.integer(f[2], "dst", last));
    if (r.src == r.dst) in.fail("src and dst are both node " + f[1]);
    r.bytes = in.integer(f[3], "bytes", kMaxTraceBytes);
    if (r.bytes == 0) in.fail("bytes must be at least 1");
    if (f[4] != "send" && f[4] != "read" && f[4] != "write")
        in.fail("kind '" + f[4].substr(0, 40) + "' must be send, read or write");
    r.kind = f[4][0];
    return r;
}

class Trace : public Workload {
  public:
    Trace(const WorkloadOptions &opt, Network &net) {
        std::ifstream f(opt.trace_path);
        if (!f) throw std::invalid_argument(opt.trace_path + ": cannot open trace");
        std::string raw;
        int line = 0;
        while (std::getline(f, raw)) {
            ++line;
            const auto hash = raw.find('#');
            if (hash != std::string::npos) raw.resize(hash);
            std::istringstream in(raw);
            std::vector<std::string> fields;
            for (std::string w; in >> w;) fields.push_back(w);
            if (fields.empty()) continue;
            const TraceLine where(opt.trace_path + ":" + std::to_string(line) + ": ",
                                  series_reach_us(net));
            records_.push_back(read_record(fields, where, net.nodes()));
            payload_ += static_cast<double>(records_.back().bytes);
        }
        if (records_.size() > 0xFFFFFFFFu)
            throw std::invalid_argument(opt.trace_path + ": more than 2^32 records");
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
        remaining_ = records_.size();
    }
    void start(Network &net) override {
        if (records_.empty()) net.stop();
        for (std::size_t i = 0; i < records_.size(); ++i)
            net.schedule_timer(records_[i].at, this, static_cast<std::uint32_t>(i));
    }
    void timer(Network &net, std::uint32_t arg) override {
        const Record &r = records_[arg];
        if (r.kind == 's')
            layer_->send(r.src, r.dst, r.bytes, arg);
        else
            net.start_transfer(r.src, r.dst, r.bytes, r.kind == 'r', this, arg);
    }
    void transfer_done(Network &net, std::uint32_t, std::uint64_t) override { done(net); }
    void message_done(Network &net, std::uint32_t, const Message &) override { done(net); }
    bool finished() const override { return remaining_ == 0; }
    double total_bytes() const override { return payload_; }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        for (const Record &r : records_) visit(r.src, r.dst);
    }
    bool reads() const override {
        for (const Record &r : records_)
            if (r.kind == 'r') return true;
        return false;
    }

  private:
    void done(Network &net) {
        if (--remaining_ == 0) net.stop();
    }
    std::vector<Record> records_;
    std::uint64_t remaining_ = 0;
    double payload_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_trace(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<Trace>(opt, net);
}

}  // namespace sansim
