// Trace replay: lines of "time_us src dst bytes kind", kind send (a message through the
// message layer), read or write (a raw BTE transfer). '#' starts a comment.
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
            double t;
            Record r{};
            std::string kind;
            if (!(in >> t)) continue;
            const std::string where = opt.trace_path + ":" + std::to_string(line) + ": ";
            if (!(in >> r.src >> r.dst >> r.bytes >> kind))
                throw std::invalid_argument(where +
                                            "expected: time_us src dst bytes send|read|write");
            if (t < 0 || r.src < 0 || r.dst < 0 || r.src >= net.nodes() || r.dst >= net.nodes() ||
                r.src == r.dst || r.bytes == 0)
                throw std::invalid_argument(where + "bad time, node or size");
            if (kind != "send" && kind != "read" && kind != "write")
                throw std::invalid_argument(where + "kind must be send, read or write");
            r.at = from_us(t);
            r.kind = kind[0];
            records_.push_back(r);
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
};

}  // namespace

std::unique_ptr<Workload> make_trace(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<Trace>(opt, net);
}

}  // namespace sansim
