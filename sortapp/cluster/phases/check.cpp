// The check, before any work (before phases 1 and 2, or the river sort): the monitor sends the
// job's parameters; every node checks its record format, its input (a regular, readable file
// of whole records, whose identity is kept for the commit), its output (never the input) and
// directories, creates its job directory, measures (or reads its cached measurement of) its
// scratch disk and reports the free space of its disks, which the monitor sums per disk. Any
// problem stops the job, naming the node.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "paths.hpp"
#include "phases/phases.hpp"
#include "sortapp/space_check.hpp"
#include "viaduct/safe_file.hpp"

namespace sortapp::cluster {

namespace {

Status check_input(Node &n) {
    struct stat st;
    if (stat(n.input.c_str(), &st) != 0) return Status::from_errno("input " + n.input, errno);
    n.input_at_start = identity_of(st);
    if (!S_ISREG(st.st_mode)) return Status::error("input " + n.input + " is not a regular file");
    if (access(n.input.c_str(), R_OK) != 0) return Status::from_errno("input " + n.input, errno);
    if (static_cast<uint64_t>(st.st_size) % n.format.record_size != 0)
        return Status::error("input " + n.input + " holds " + std::to_string(st.st_size) +
                             " bytes, not a whole number of " +
                             std::to_string(n.format.record_size) + "-byte records");
    return Status::ok();
}

Status check_paths(Node &n) {
    SORTAPP_TRY(check_input(n));
    if (same_file(path_id(n.output), path_id(n.input)))
        return Status::error("output " + n.output + " is the input " + n.input +
                             ": sortapp never overwrites an input");
    const std::string outdir = split_path(n.output).dir;
    if (access(outdir.c_str(), W_OK) != 0)
        return Status::from_errno("output directory " + outdir, errno);
    if (access(n.scratch.c_str(), W_OK) != 0)
        return Status::from_errno("scratch directory " + n.scratch, errno);
    // Another user who may rename or replace what is put there could swap a file (or the job's
    // directory) between its writing and its use.
    for (const std::string &dir : {outdir, n.scratch}) {
        std::string why;
        if (!viaduct::open_checked_dir(dir, viaduct::DirTrust::shared, why).valid())
            return Status::error(why);
    }
    // A directory of the job's own: whatever is in it was made by this job, so it can all go.
    if (n.job_dir.empty()) {
        std::string dir = n.scratch + "/.sortapp-job-" + n.job_id + "-" + std::to_string(n.rank);
        SORTAPP_TRY(cleanup::create([&](std::string &path) {
            if (mkdir(dir.c_str(), 0700) != 0)
                return Status::from_errno("cannot create the job's directory " + dir, errno);
            path = dir;
            return Status::ok();
        }));
        n.job_dir = dir;
    }
    return Status::ok();
}

// "host:device N" of the directory ("host:?" where it cannot be examined), and the bytes free
// there for this user (kUnknownFree where the directory cannot be examined or its file
// system does not know its size).
std::string disk_of(const std::string &dir, uint64_t &free_bytes) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string disk = "?";
    if (!disk_space(dir, disk, free_bytes)) free_bytes = NodeCheck::kUnknownFree;
    return std::string(host) + ":" + disk;
}

// The input's records, the scratch disk's bandwidth and which disks it and the output are on.
NodeCheck measure(Node &n) {
    NodeCheck chk;
    struct stat st;
    stat(n.input.c_str(), &st);
    chk.records = static_cast<uint64_t>(st.st_size) / n.format.record_size;
    DiskProbeOptions probe;
    probe.dir = n.scratch;
    probe.cache_path = default_disk_cache_path();
    probe.bytes = 64u << 20;
    probe.remeasure = n.params.remeasure != 0;
    // The monitor's report names stale figures once for the whole job.
    probe.warn_stale = false;
    // A node that cannot measure still sorts; its expectations are unknown.
    if (probe_disk(probe, n.disk)) {
        chk.disk_read_mb_s = n.disk.read_mb_s;
        chk.disk_write_mb_s = n.disk.write_mb_s;
        chk.disk_mixed_mb_s = n.disk.mixed_mb_s;
    }
    chk.disk = disk_of(n.scratch, chk.scratch_free);
    chk.output_disk = disk_of(split_path(n.output).dir, chk.output_free);
    return chk;
}

// What the job will write on each disk, summed over the nodes that share it: the three-phase
// sort's work file (and its runs, unless the input fits the memory budget) in scratch; the
// river sort's runs when two passes are asked for; every node's share of the output.
Status check_job_space(const JobParams &p, const std::vector<NodeCheck> &checks) {
    uint64_t total = 0;
    for (const NodeCheck &c : checks) total += c.records;
    if (checks.empty() || total == 0) return Status::ok();
    const uint64_t share = (total / checks.size() + 1) * p.record_size;
    std::vector<SpaceNeed> needs;
    for (size_t i = 0; i < checks.size(); ++i) {
        const NodeCheck &c = checks[i];
        const uint64_t in = c.records * p.record_size;
        const bool runs = p.memory_budget == 0 || in > p.memory_budget;
        const uint64_t scratch =
            p.algorithm == kThreePhase ? in * (runs ? 2 : 1) : (p.passes == 2 ? share : 0);
        const std::string node = "node " + std::to_string(i) + "'s ";
        // A disk a node could not size is not checked (its writes still name a full disk).
        if (c.scratch_free != NodeCheck::kUnknownFree)
            needs.push_back({c.disk, node + "work files", scratch, c.scratch_free});
        if (c.output_free != NodeCheck::kUnknownFree)
            needs.push_back({c.output_disk, node + "output", share, c.output_free});
    }
    return check_space(needs);
}

}  // namespace

void node_check(Node &n, const Order &o) {
    n.set_progress("checking", 0, 0);
    if (!decode(o.info.data, o.info.len, n.params)) {
        reply_error(n.rio, o.in, "malformed parameters");
        return;
    }
    n.format = RecordFormat{static_cast<size_t>(n.params.record_size),
                            static_cast<size_t>(n.params.key_size)};
    Status s = n.format.validate();
    if (s) s = check_paths(n);
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    {
        std::lock_guard<std::mutex> lk(n.progress_mu);
        n.progress_record_size = n.format.record_size;
    }
    reply(n.rio, o.in, measure(n));
}

Status monitor_check(Monitor &m) {
    auto answers = m.ask_all(
        kCmdCheck, RIO_TARGET_WORKER, [&](int) { return encode(m.opts().params); }, 4096);
    SORTAPP_TRY(decode_answers(m, answers, "checking", m.job.checks));
    // A question each node's shadow thread answers at once: its clock against the monitor's,
    // and its samples so far.
    bool complete = false;
    SORTAPP_TRY(ask_counters(m, "checking", complete));
    return check_job_space(m.opts().params, m.job.checks);
}

}  // namespace sortapp::cluster
