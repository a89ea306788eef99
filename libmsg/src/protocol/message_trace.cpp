// VIADUCT_TRACE: per-rank CSV message traces for replay (sansim's replay
// workload). The file, written only at msg_finalize, reads:
//   # viaduct-trace 1
//   # rank R size N clock_monotonic_ns M clock_realtime_ns W
//   rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status
//   0,send,1,7,1024,eager,123,456,0
//   ...
//   # end records K dropped D
// M and W were read together at msg_init, so post_ns - M + W is the wall
// clock of a post and traces from one host (or synchronized hosts) align.
// kind is send or recv; peer and tag are the matched ones (a wildcard
// receive names the sender); bytes are those moved; protocol is eager, self,
// send_recv, rdma_read or rdma_write; status is the completion's msg_status.
// Only a file ending in the "# end" line is complete: it is written under a
// temporary name and renamed.
#include "protocol/message_trace.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <new>
#include <string>

#include "common/log.hpp"
#include "common/protocol_names.hpp"
#include "msg/msg.h"
#include "protocol/long_protocol.hpp"
#include "protocol/request.hpp"
#include "viaduct/safe_file.hpp"

namespace msg {
namespace {

uint64_t read_clock(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string rank_path(const std::string &pattern, int rank) {
    const auto at = pattern.find("%r");
    if (at == std::string::npos) return pattern + "." + std::to_string(rank);
    std::string p = pattern;
    p.replace(at, 2, std::to_string(rank));
    return p;
}

const char *trace_name(int p) {
    if (p == MessageTrace::kEager) return "eager";
    if (p == MessageTrace::kSelf) return "self";
    const ProtocolNames *n = protocol_names(p);
    return n != nullptr ? n->trace : "send_recv";
}

}  // namespace

MessageTrace::MessageTrace(const std::string &path, size_t max_records, int rank, int size)
    : path_(rank_path(path, rank)), max_records_(max_records), rank_(rank), size_(size) {
    mono0_ns_ = read_clock(CLOCK_MONOTONIC);
    wall0_ns_ = read_clock(CLOCK_REALTIME);
}

uint64_t MessageTrace::now() {
    return read_clock(CLOCK_MONOTONIC);
}

void MessageTrace::record(const Request &r, int status, size_t bytes) {
    const uint64_t done = now();
    const int protocol = r.proto != nullptr ? r.proto->moved_by(r)
                         : r.peer == rank_  ? kSelf
                                            : kEager;
    std::lock_guard<std::mutex> lk(mu_);
    if (finished_ || records_.size() >= max_records_) {
        ++dropped_;
        return;
    }
    try {
        records_.push_back(Record{r.posted_ns, done, bytes, r.peer, r.tag, status,
                                  static_cast<int8_t>(protocol), r.is_send});
    } catch (const std::bad_alloc &) {
        ++dropped_;
    }
}

std::string MessageTrace::text_locked() const {
    std::string text;
    text.reserve(128 * (records_.size() + 4));
    char line[256];
    std::snprintf(line, sizeof line,
                  "# viaduct-trace 1\n# rank %d size %d clock_monotonic_ns %llu "
                  "clock_realtime_ns %llu\n",
                  rank_, size_, static_cast<unsigned long long>(mono0_ns_),
                  static_cast<unsigned long long>(wall0_ns_));
    text += line;
    text += "rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status\n";
    for (const Record &x : records_) {
        std::snprintf(line, sizeof line, "%d,%s,%d,%d,%llu,%s,%llu,%llu,%d\n", rank_,
                      x.is_send ? "send" : "recv", x.peer, x.tag,
                      static_cast<unsigned long long>(x.bytes), trace_name(x.protocol),
                      static_cast<unsigned long long>(x.post_ns),
                      static_cast<unsigned long long>(x.done_ns), x.status);
        text += line;
    }
    std::snprintf(line, sizeof line, "# end records %zu dropped %llu\n", records_.size(),
                  static_cast<unsigned long long>(dropped_));
    return text + line;
}

bool MessageTrace::finish() {
    std::lock_guard<std::mutex> lk(mu_);
    if (finished_) return true;
    finished_ = true;
    // Built whole, then written under a fresh name and renamed into place (never through a
    // planted link, never half a trace under the final name).
    std::string text;
    try {
        text = text_locked();
    } catch (const std::bad_alloc &) {
        log_error("trace: no memory to write %s", path_.c_str());
        return false;
    }
    const std::string why = viaduct::write_file_atomically(path_, text);
    if (!why.empty()) {
        log_error("trace: %s", why.c_str());
        return false;
    }
    return true;
}

}  // namespace msg
