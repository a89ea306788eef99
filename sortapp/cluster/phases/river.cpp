// The river algorithm (NOW-Sort's parallel sort, splitters.hpp and river_sort.hpp): the
// monitor asks every node for keys at random positions of its input, chooses the splitters,
// then orders the river sort, in which every node sends each record to its partition's node
// while reading, and sorts and writes what it received. Its output, like phase 3b's, stays
// under a temporary name until the commit.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <new>
#include <random>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"
#include "river_sort.hpp"
#include "sortapp/parallel.hpp"
#include "splitters.hpp"

namespace sortapp::cluster {

namespace {

// No node is asked for more samples than this (the monitor's messages stay small).
constexpr uint64_t kMaxSamples = 1u << 20;

// The keys at `positions` of the input, read by 16 threads at once (random reads, which a
// virtual disk serves faster the more of them are queued).
Status read_samples(const Node &n, const std::vector<uint64_t> &positions, RiverSamples &out) {
    int fd = open(n.input.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::from_errno("input " + n.input, errno);
    // Each read wants one key: no read-ahead around it.
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    out.samples.assign(positions.size(), Element{});
    std::atomic<bool> failed{false};
    const size_t ks = n.format.key_size, rs = n.format.record_size;
    const unsigned threads = 16;
    parallel_run(threads, [&](unsigned t) {
        for (size_t i = t; i < positions.size() && !failed; i += threads) {
            Element &e = out.samples[i];
            e.key.resize(ks);
            e.node = static_cast<uint32_t>(n.rank);
            e.pos = positions[i];
            auto off = static_cast<off_t>(positions[i] * rs);
            if (pread(fd, e.key.data(), ks, off) != static_cast<ssize_t>(ks)) failed = true;
        }
    });
    close(fd);
    if (failed) return Status::error("input " + n.input + ": cannot read a sampled key");
    return Status::ok();
}

uint64_t input_records(const Node &n) {
    struct stat st;
    if (stat(n.input.c_str(), &st) != 0) return 0;  // then reading a sample names the problem
    return static_cast<uint64_t>(st.st_size) / n.format.record_size;
}

}  // namespace

void node_river_sample(Node &n, const Order &o) {
    n.set_progress("sampling", 0, 0);
    SampleOrder order;
    if (!decode(o.info.data, o.info.len, order) || order.count > kMaxSamples) {
        reply_error(n.rio, o.in, "malformed sample order");
        return;
    }
    RiverSamples out;
    Status s = read_samples(n, sample_positions(input_records(n), order.count, order.seed), out);
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    reply(n.rio, o.in, out);
}

void node_river_sort(Node &n, const Order &o) {
    RiverOrder order;
    if (!decode(o.info.data, o.info.len, order)) {
        reply_error(n.rio, o.in, "malformed river order");
        return;
    }
    RiverSortSettings rs;
    rs.format = n.format;
    rs.input = n.input;
    rs.output = n.output;
    rs.temp_tag = n.job_id;
    rs.run_dir = n.job_dir;
    rs.splitters = std::move(order.splitters);
    rs.node = static_cast<uint32_t>(n.rank);
    rs.nodes = static_cast<uint32_t>(n.monitor);
    rs.memory_budget = n.memory_budget();
    rs.passes = n.params.passes;
    rs.expected_share = order.expected_share;
    rs.batch_bytes = order.batch_bytes;
    rs.stall_ms = n.opts.stall_ms;
    RiverSortResult res;
    Status s;
    try {
        s = river_sort(n.msg, rs, res, [&n](const char *phase, uint64_t done, uint64_t total) {
            n.set_progress(phase, done, total);
        });
    } catch (const std::bad_alloc &) {
        s = out_of_memory("river sort: ", rs.memory_budget);
    }
    n.set_progress("sorted", 0, 0);
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    n.pending_output = res.pending_output;
    RiverDone done;
    done.input_records = res.input_records;
    done.records = res.records;
    done.one_pass = res.one_pass ? 1 : 0;
    done.runs = static_cast<uint32_t>(res.runs);
    done.phases = {res.distribute, res.finish};
    reply(n.rio, o.in, done);
}

Status monitor_sample(Monitor &m) {
    std::vector<uint64_t> records;
    uint64_t total = 0;
    for (const NodeCheck &c : m.job.checks) records.push_back(c.records), total += c.records;
    const uint32_t n = static_cast<uint32_t>(m.nodes());
    const std::vector<uint64_t> per = samples_per_node(records, samples_wanted(n, total));
    const uint64_t seed = std::random_device{}();
    const double t = now_seconds();
    const size_t key_size = m.opts().params.key_size;
    uint64_t most = 0;
    for (uint64_t k : per) most = std::max(most, k);
    auto answers = m.ask_all(
        kCmdRiverSample, RIO_TARGET_WORKER,
        [&](int i) {
            return encode(SampleOrder{per[static_cast<size_t>(i)], seed + i});
        },
        most * (key_size + 24) + 4096);
    std::vector<RiverSamples> replies;
    SORTAPP_TRY(
        decode_answers(m, answers, "sampling", replies, [&](uint32_t i, const RiverSamples &r) {
            if (r.samples.size() != per[i]) return Status::error("wrong number of samples");
            for (const Element &e : r.samples)
                if (e.key.size() != key_size || e.node != i || e.pos >= records[i])
                    return Status::error("a sample that is not a key of its input");
            return Status::ok();
        }));
    std::vector<Element> all;
    for (RiverSamples &r : replies)
        for (Element &e : r.samples) all.push_back(std::move(e));
    m.job.samples = all.size();
    m.job.splitters = choose_splitters(std::move(all), n);
    m.job.sample_s = now_seconds() - t;
    return Status::ok();
}

Status monitor_river(Monitor &m) {
    if (m.opts().network_mb_s > 0) {
        m.job.network_mb_s = m.opts().network_mb_s;
    } else if (m.nodes() > 1) {
        SORTAPP_TRY(measure_network(m, m.job.network_mb_s));
    }
    uint64_t total = 0;
    for (const NodeCheck &c : m.job.checks) total += c.records;
    const auto n = static_cast<uint32_t>(m.nodes());
    RiverOrder order{m.job.splitters, (total + n - 1) / n,
                     river_batch_bytes(n, m.opts().params.memory_budget)};
    m.progress("%d nodes ready; %llu samples, splitters chosen; the river sort on every node",
               m.nodes(), static_cast<unsigned long long>(m.job.samples));
    const double t = now_seconds();
    auto answers = m.ask_all(
        kCmdRiverSort, RIO_TARGET_WORKER, [&](int) { return encode(order); }, 1 << 16);
    m.job.river_s = now_seconds() - t;
    SORTAPP_TRY(
        decode_answers(m, answers, "river sort", m.job.river, [&](uint32_t i, const RiverDone &d) {
            if (d.input_records != m.job.checks[i].records)
                return Status::error("sent " + std::to_string(d.input_records) +
                                     " records of an input of " +
                                     std::to_string(m.job.checks[i].records));
            return Status::ok();
        }));
    // Every record sent arrived somewhere, once: the partitions add up to the inputs.
    uint64_t got = 0;
    for (const RiverDone &d : m.job.river) got += d.records;
    if (got != total)
        return Status::error("river sort: the nodes received " + std::to_string(got) +
                             " records of the " + std::to_string(total) + " they sent");
    for (const RiverDone &d : m.job.river) {
        m.job.local.push_back(LocalDone{d.records, 0, d.phases});
        m.job.partition_records.push_back(d.records);
    }
    return Status::ok();
}

}  // namespace sortapp::cluster
