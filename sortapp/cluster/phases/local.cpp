// Phases 1 and 2 on every node at once: each runs the single-node engine (sortapp local's
// code) on its input into a work file in its job directory, exports it read-only through
// libremoteio for phase 3b, and keeps it open for phase 3a's questions.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "node/test_needle.hpp"
#include "phases/phases.hpp"
#include "sortapp/local_sort.hpp"
#include "sortapp/report.hpp"

namespace sortapp::cluster {

namespace {

// The work file as phase 3a sees it: keys read by position.
class WorkFileSource final : public SortedSource {
  public:
    WorkFileSource(int fd, uint64_t records, const RecordFormat &f)
        : fd_(fd), records_(records), format_(f) {}
    uint64_t size() const override { return records_; }
    std::string key(uint64_t pos) const override {
        std::string k(format_.key_size, '\0');
        auto off = static_cast<off_t>(pos * format_.record_size);
        if (pread(fd_, k.data(), k.size(), off) != static_cast<ssize_t>(k.size()))
            throw std::runtime_error("cannot read the work file");
        return k;
    }

  private:
    int fd_;
    uint64_t records_;
    RecordFormat format_;
};

PhaseFigures from_report(const PhaseReport &r) {
    PhaseFigures f;
    f.phase = r.name;
    f.seconds = r.seconds;
    f.cpu_seconds = r.cpu_seconds;
    f.expected_seconds = r.expected_seconds;
    f.bytes_read = r.bytes;
    f.bytes_written = r.bytes;
    f.resource = "disk";
    return f;
}

Status sort_locally(Node &n, const DiskBandwidth &disk, LocalSortResult &res) {
    SortOptions so;
    so.format = n.format;
    so.memory_budget = n.memory_budget();
    so.scratch_dir = n.job_dir;
    n.work = n.job_dir + "/work";
    so.progress = [&n](const char *phase, uint64_t done, uint64_t total) {
        n.set_progress(phase, done, total);
        test_needle_progress(phase, done);
    };
    try {
        return local_sort(so, n.input, n.work, disk, res);
    } catch (const std::bad_alloc &) {
        return out_of_memory("", so.memory_budget);
    }
}

// The work file, open for phase 3a and exported for phase 3b.
Status offer_work_file(Node &n, uint64_t records, uint64_t &handle) {
    n.work_fd = open(n.work.c_str(), O_RDONLY | O_CLOEXEC);
    if (n.work_fd < 0) return Status::from_errno("work file " + n.work, errno);
    int rc = rio_export(n.rio, n.work.c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &handle);
    if (rc != RIO_OK)
        return Status::error(std::string("exporting the work file: ") + rio_strerror(rc));
    std::lock_guard<std::mutex> lk(n.source_mu);
    n.source = std::make_unique<WorkFileSource>(n.work_fd, records, n.format);
    return Status::ok();
}

}  // namespace

void node_local(Node &n, const Order &o) {
    // Nodes sharing one disk share its bandwidth: the expectations say so.
    uint32_t sharing = 1;
    if (o.info.len == sizeof sharing) std::memcpy(&sharing, o.info.data, sizeof sharing);
    DiskBandwidth disk = n.disk;
    if (sharing > 1) {
        disk.read_mb_s /= sharing;
        disk.write_mb_s /= sharing;
        disk.mixed_mb_s /= sharing;
    }
    LocalSortResult res;
    Status s = sort_locally(n, disk, res);
    n.set_progress("sorted", 0, 0);
    LocalDone done;
    if (s) s = offer_work_file(n, res.records, done.handle);
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    done.records = res.records;
    for (const PhaseReport &p : res.phases) done.phases.push_back(from_report(p));
    reply(n.rio, o.in, done);
}

Status monitor_local(Monitor &m) {
    m.progress("%d nodes ready; phases 1 and 2 (local sort) on every node", m.nodes());
    const std::vector<uint32_t> sharing = nodes_sharing_disk(m.job.checks);
    const double t = now_seconds();
    auto answers = m.ask_all(
        kCmdLocal, RIO_TARGET_WORKER,
        [&](int i) {
            const char *p = reinterpret_cast<const char *>(&sharing[static_cast<size_t>(i)]);
            return std::vector<char>(p, p + sizeof(uint32_t));
        },
        1 << 16);
    m.job.local_s = now_seconds() - t;
    return decode_answers(m, answers, "phases 1 and 2", m.job.local);
}

}  // namespace sortapp::cluster
