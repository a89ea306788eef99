// The monitor's store of the nodes' counter samples (see counters.hpp): each answer checked
// whole before any of it is taken, and the collation onto the monitor's clock.
#include "monitor/counters.hpp"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace sortapp::cluster {

static_assert(sizeof(viaduct::CounterSample) == kSampleBytes &&
                  std::is_trivially_copyable_v<viaduct::CounterSample>,
              "a counter sample travels as it is in memory, kSampleBytes long");

namespace {

// Microseconds since the epoch that a clock can read: after 1970, before 2286. Within these,
// shifting a time by a difference of two of them cannot overflow.
constexpr int64_t kLatestUs = 10'000'000'000'000'000;

bool readable_time(int64_t us) {
    return us > 0 && us <= kLatestUs;
}

// The samples of an answer, copied out of its bytes (which need not be aligned for them).
std::vector<viaduct::CounterSample> unpack(const std::string &bytes) {
    std::vector<viaduct::CounterSample> out(bytes.size() / kSampleBytes);
    for (size_t j = 0; j < out.size(); ++j)
        std::memcpy(&out[j], bytes.data() + j * kSampleBytes, kSampleBytes);
    return out;
}

// What is wrong with an answer's samples against its table; "" when nothing.
std::string samples_fault(const std::vector<viaduct::CounterSample> &got, size_t names) {
    for (const viaduct::CounterSample &s : got) {
        if (s.phase >= names)
            return "a sample in phase " + std::to_string(s.phase) + " of a table of " +
                   std::to_string(names) + " phase names";
        if (!readable_time(s.time_us))
            return "a sample taken at " + std::to_string(s.time_us) + " us, a time no clock reads";
    }
    return "";
}

uint32_t global_phase(std::vector<std::string> &table, const std::string &name) {
    auto at = std::find(table.begin(), table.end(), name);
    if (at == table.end()) at = table.insert(table.end(), name);
    return static_cast<uint32_t>(at - table.begin());
}

}  // namespace

int64_t realtime_us() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

Status NodeCounters::take(uint64_t asked, const CountersAnswer &a, int64_t sent_us,
                          int64_t received_us) {
    if (a.first < asked)
        return Status::error("samples from number " + std::to_string(a.first) +
                             " when asked from " + std::to_string(asked));
    if (a.phase_names.size() < phase_names.size() ||
        !std::equal(phase_names.begin(), phase_names.end(), a.phase_names.begin()))
        return Status::error("a table of phase names that does not extend the one before");
    if (!readable_time(static_cast<int64_t>(a.clock_us)))
        return Status::error("a clock reading of " + std::to_string(a.clock_us) + " us");
    const std::vector<viaduct::CounterSample> got = unpack(a.samples);
    if (std::string why = samples_fault(got, a.phase_names.size()); !why.empty())
        return Status::error(why);

    phase_names = a.phase_names;
    observe_clock(static_cast<int64_t>(a.clock_us), sent_us, received_us);
    end = std::max(end, a.end);
    // Another question may have brought some of these already; a later first than the next
    // one wanted means the node's ring had dropped those between.
    for (size_t j = 0; j < got.size(); ++j) {
        const uint64_t number = a.first + j;
        if (number < next) continue;
        lost += number - next;
        samples.push_back(got[j]);
        next = number + 1;
    }
    if (got.empty() && a.first > next) lost += a.first - next, next = a.first;
    if (samples.size() > kMaxHeldSamples) {
        // Dropped in batches, so that a long job does not move the whole store every answer.
        const size_t drop = samples.size() - kMaxHeldSamples + kMaxHeldSamples / 8;
        samples.erase(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(drop));
        lost += drop;
    }
    return Status::ok();
}

void NodeCounters::observe_clock(int64_t node_us, int64_t sent_us, int64_t received_us) {
    if (sent_us <= 0 || received_us < sent_us) return;
    const int64_t trip = received_us - sent_us;
    if (clock_known && trip >= round_trip_us) return;
    clock_known = true;
    round_trip_us = trip;
    offset_us = node_us - (sent_us + trip / 2);
}

Collated collate(const std::vector<NodeCounters> &counters, const std::vector<NodeCheck> &checks) {
    Collated c;
    for (size_t i = 0; i < counters.size(); ++i) {
        const NodeCounters &from = counters[i];
        std::vector<uint32_t> phase_of;
        for (const std::string &name : from.phase_names)
            phase_of.push_back(global_phase(c.phase_names, name));
        viaduct::timeline::Node node;
        node.index = static_cast<int>(i);
        if (i < checks.size()) node.host = checks[i].disk.substr(0, checks[i].disk.rfind(':'));
        node.samples = from.samples;
        for (viaduct::CounterSample &s : node.samples) {
            s.phase = phase_of[s.phase];
            s.time_us -= from.offset_us;
        }
        // A clock stepped back while the node sampled would put its samples out of order.
        std::stable_sort(node.samples.begin(), node.samples.end(),
                         [](const auto &x, const auto &y) { return x.time_us < y.time_us; });
        c.nodes.push_back(std::move(node));
    }
    return c;
}

}  // namespace sortapp::cluster
