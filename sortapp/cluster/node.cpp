// A sort process: the sorting thread (this one) does what the monitor asks —
// check, phases 1 and 2, phase 3b — while libremoteio's shadow thread serves
// every other node's remote reads of this node's work file and the monitor's
// phase 3a questions. Everything the node creates is tracked by sortapp::cleanup: an abort
// from the monitor, the monitor's death or silence, or a signal removes it all; the output
// is renamed into place only when the monitor says the whole job succeeded (commit).
#include "node.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "liveness.hpp"
#include "messages.hpp"
#include "paths.hpp"
#include "remote_merge.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/local_sort.hpp"
#include "sortapp/memory_budget.hpp"
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

struct Node {
    Node(const JobOptions &o, msg_context_t *m, int r) : opts(o), msg(m), rank(r) {}
    Node(const Node &) = delete;
    Node &operator=(const Node &) = delete;
    const JobOptions &opts;
    msg_context_t *msg;
    int rank;
    rio_t *rio = nullptr;
    JobParams params;
    RecordFormat format;
    std::string input, output, scratch;
    std::string job_id;
    std::string job_dir;  // in scratch, this job's own: the work file and the runs
    std::string work;
    int work_fd = -1;
    std::mutex source_mu;
    std::unique_ptr<WorkFileSource> source;  // once phase 2 is done
    DiskBandwidth disk;
    std::string pending_output;  // phase 3b's complete output, under its temporary name
    bool committed = false;
    // Whether the monitor's final word has come, for a signal that arrives after the commit:
    // the whole job keeps or loses its outputs together, so the node waits for that word.
    struct FinalWord {
        std::mutex mu;
        std::condition_variable cv;
        bool heard = false;
    };
    std::shared_ptr<FinalWord> final_word = std::make_shared<FinalWord>();
    std::vector<char> probe_bytes;
    // What the sorting thread is doing, for the monitor's progress display.
    std::mutex progress_mu;
    std::string progress_phase = "waiting";
    uint64_t progress_done = 0, progress_total = 0;
    void set_progress(const char *phase, uint64_t done, uint64_t total) {
        bool changed = false;
        {
            std::lock_guard<std::mutex> lk(progress_mu);
            changed = progress_phase != phase;
            progress_phase = phase;
            progress_done = done;
            progress_total = total;
        }
        if (changed) set_phase(phase);  // outside the lock: the shadow thread reads progress
    }

    ~Node() {
        if (work_fd >= 0) close(work_fd);
        if (!job_dir.empty()) cleanup::remove(job_dir);
    }
};

std::string phase_resource(const std::string &) {
    return "disk";
}

PhaseFigures from_report(const PhaseReport &r) {
    PhaseFigures f;
    f.phase = r.name;
    f.seconds = r.seconds;
    f.cpu_seconds = r.cpu_seconds;
    f.expected_seconds = r.expected_seconds;
    f.bytes_read = r.bytes;
    f.bytes_written = r.bytes;
    f.resource = phase_resource(r.name);
    return f;
}

int reply_error(rio_t *rio, rio_incoming_t *in, const std::string &message) {
    return rio_reply(rio, in, kNodeError, message.data(), message.size());
}

template <typename T>
int reply(rio_t *rio, rio_incoming_t *in, const T &value) {
    std::vector<char> bytes = encode(value);
    return rio_reply(rio, in, RIO_OK, bytes.data(), bytes.size());
}

// Phase 3a questions, answered on the shadow thread from the work file.
void on_select(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *node = static_cast<Node *>(arg);
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    std::lock_guard<std::mutex> lk(node->source_mu);
    if (!node->source) {
        reply_error(rio, in, "work file not ready");
        return;
    }
    try {
        const auto self = static_cast<uint32_t>(node->rank);
        if (info.command == kCmdSamples) {
            SampleRequest q;
            if (!decode(info.data, info.len, q)) {
                reply_error(rio, in, "malformed sample request");
                return;
            }
            reply(rio, in, answer_samples(*node->source, self, q));
        } else {
            CountRequest q;
            if (!decode(info.data, info.len, q)) {
                reply_error(rio, in, "malformed count request");
                return;
            }
            reply(rio, in, answer_counts(*node->source, self, q));
        }
    } catch (const std::exception &e) {
        reply_error(rio, in, e.what());
    }
}

// The network probe's far end: a reply of the asked size.
void on_probe(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *node = static_cast<Node *>(arg);
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    uint64_t want = 0;
    if (info.len == sizeof want) std::memcpy(&want, info.data, sizeof want);
    if (want > node->probe_bytes.size()) want = node->probe_bytes.size();
    rio_reply(rio, in, RIO_OK, node->probe_bytes.data(), want);
}

// The monitor gave up on the job: everything this node created goes, and so does the node,
// whatever its sorting thread is doing.
void on_abort(rio_t *rio, rio_incoming_t *in, void *) {
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    std::string why(static_cast<const char *>(info.data), std::min<size_t>(info.len, 4096));
    rio_reply(rio, in, RIO_OK, nullptr, 0);
    cleanup::abort_process(1, "sortapp: " + whereabouts() + ": the job was aborted (" + why +
                                  "); removed what this node created");
}

void on_progress(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *node = static_cast<Node *>(arg);
    PhaseFigures f;
    {
        std::lock_guard<std::mutex> lk(node->progress_mu);
        f.phase = node->progress_phase;
        f.bytes_read = node->progress_done;
        f.bytes_written = node->progress_total;
    }
    reply(rio, in, f);
}

Status check_paths(Node &n) {
    struct stat st;
    if (stat(n.input.c_str(), &st) != 0) return Status::from_errno("input " + n.input, errno);
    if (!S_ISREG(st.st_mode)) return Status::error("input " + n.input + " is not a regular file");
    if (access(n.input.c_str(), R_OK) != 0) return Status::from_errno("input " + n.input, errno);
    if (static_cast<uint64_t>(st.st_size) % n.format.record_size != 0)
        return Status::error("input " + n.input + " holds " + std::to_string(st.st_size) +
                             " bytes, not a whole number of " +
                             std::to_string(n.format.record_size) + "-byte records");
    if (same_file(path_id(n.output), path_id(n.input)))
        return Status::error("output " + n.output + " is the input " + n.input +
                             ": sortapp never overwrites an input");
    const std::string outdir = split_path(n.output).dir;
    if (access(outdir.c_str(), W_OK) != 0)
        return Status::from_errno("output directory " + outdir, errno);
    if (access(n.scratch.c_str(), W_OK) != 0)
        return Status::from_errno("scratch directory " + n.scratch, errno);
    // A directory of the job's own: whatever is in it was made by this job, so it can all go.
    if (n.job_dir.empty()) {
        std::string dir = n.scratch + "/.sortapp-job-" + n.job_id + "-" + std::to_string(n.rank);
        if (mkdir(dir.c_str(), 0700) != 0)
            return Status::from_errno("cannot create the job's directory " + dir, errno);
        n.job_dir = dir;
        cleanup::track(dir);
    }
    return Status::ok();
}

double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Each of the monitor's orders; every one answers it exactly once.
void do_check(Node &n, rio_incoming_t *in, const rio_request_info_t &info) {
    n.set_progress("checking", 0, 0);
    if (!decode(info.data, info.len, n.params)) {
        reply_error(n.rio, in, "malformed parameters");
        return;
    }
    n.format = RecordFormat{static_cast<size_t>(n.params.record_size),
                            static_cast<size_t>(n.params.key_size)};
    Status s = n.format.validate();
    if (s) s = check_paths(n);
    if (!s) {
        reply_error(n.rio, in, s.message());
        return;
    }
    NodeCheck chk;
    struct stat st;
    stat(n.input.c_str(), &st);
    chk.records = static_cast<uint64_t>(st.st_size) / n.format.record_size;
    DiskProbeOptions probe;
    probe.dir = n.scratch;
    probe.cache_path = default_disk_cache_path();
    probe.bytes = 64u << 20;
    // A node that cannot measure still sorts; its expectations are unknown.
    if (probe_disk(probe, n.disk)) {
        chk.disk_read_mb_s = n.disk.read_mb_s;
        chk.disk_write_mb_s = n.disk.write_mb_s;
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    struct stat sd;
    chk.disk = std::string(host) + ":" +
               (stat(n.scratch.c_str(), &sd) == 0 ? std::to_string(sd.st_dev) : "?");
    reply(n.rio, in, chk);
}

void do_local(Node &n, rio_incoming_t *in, const rio_request_info_t &info) {
    // Nodes sharing one disk share its bandwidth: the expectations say so.
    uint32_t sharing = 1;
    if (info.len == sizeof sharing) std::memcpy(&sharing, info.data, sizeof sharing);
    DiskBandwidth disk = n.disk;
    if (sharing > 1) {
        disk.read_mb_s /= sharing;
        disk.write_mb_s /= sharing;
    }
    SortOptions so;
    so.format = n.format;
    so.memory_budget =
        n.params.memory_budget != 0 ? n.params.memory_budget : default_memory_budget().budget;
    so.scratch_dir = n.job_dir;
    n.work = n.job_dir + "/work";
    so.progress = [&n](const char *phase, uint64_t done, uint64_t total) {
        n.set_progress(phase, done, total);
    };
    LocalSortResult res;
    Status s;
    try {
        s = local_sort(so, n.input, n.work, disk, res);
    } catch (const std::bad_alloc &) {
        s = Status::error("out of memory for a budget of " + std::to_string(so.memory_budget) +
                          " bytes (a smaller --memory is needed)");
    }
    n.set_progress("sorted", 0, 0);
    LocalDone done_msg;
    if (s) {
        n.work_fd = open(n.work.c_str(), O_RDONLY | O_CLOEXEC);
        if (n.work_fd < 0) s = Status::from_errno("work file " + n.work, errno);
    }
    if (s) {
        int rc = rio_export(n.rio, n.work.c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY,
                            &done_msg.handle);
        if (rc != RIO_OK)
            s = Status::error(std::string("exporting the work file: ") + rio_strerror(rc));
    }
    if (s) {
        done_msg.records = res.records;
        for (const PhaseReport &p : res.phases) done_msg.phases.push_back(from_report(p));
        std::lock_guard<std::mutex> lk(n.source_mu);
        n.source = std::make_unique<WorkFileSource>(n.work_fd, res.records, n.format);
    }
    s ? reply(n.rio, in, done_msg) : reply_error(n.rio, in, s.message());
}

// Pulls from the next node's shadow thread for a fixed volume.
void do_net_probe(Node &n, rio_incoming_t *in, int monitor) {
    n.set_progress("network probe", 0, 0);
    int dest = (n.rank + 1) % monitor;  // nodes are ranks 0..monitor-1
    const uint64_t piece = 4u << 20;
    const int pieces = 8;
    std::vector<char> buf(piece);
    double t0 = seconds_now();
    Status s;
    for (int i = 0; i < pieces && s; ++i) {
        size_t got = 0;
        int rc = rio_call(n.rio, dest, RIO_TARGET_SHADOW, kCmdProbe, &piece, sizeof piece,
                          buf.data(), buf.size(), &got);
        if (rc != RIO_OK || got != piece)
            s = Status::error(std::string("network probe: ") + rio_strerror(rc));
    }
    double mbps = static_cast<double>(piece) * pieces / (seconds_now() - t0) / 1e6;
    if (!s) {
        reply_error(n.rio, in, s.message());
        return;
    }
    PhaseFigures f;
    f.phase = "network probe";
    f.bytes_received = piece * pieces;
    f.seconds = mbps > 0 ? piece * pieces / (mbps * 1e6) : 0;
    reply(n.rio, in, f);
}

void do_merge(Node &n, rio_incoming_t *in, const rio_request_info_t &info, int monitor) {
    MergeOrder order;
    if (!decode(info.data, info.len, order) ||
        order.handles.size() != static_cast<size_t>(monitor)) {
        reply_error(n.rio, in, "malformed merge order");
        return;
    }
    n.set_progress("phase 3b", 0, 0);
    Stopwatch start = Stopwatch::now();
    RemoteMergeResult res;
    MergeSettings ms;
    ms.output = n.output;
    ms.temp_tag = n.job_id;
    ms.block = static_cast<size_t>(n.params.block_bytes);
    ms.depth = n.params.read_depth;
    ms.stall_ms = n.opts.stall_ms;
    Status s = remote_merge(
        n.rio, n.msg, n.rank, n.format, order, ms, res,
        [&n](uint64_t done, uint64_t total) { n.set_progress("phase 3b", done, total); });
    n.set_progress("merged", 0, 0);
    Stopwatch end = Stopwatch::now();
    if (!s) {
        reply_error(n.rio, in, s.message());
        return;
    }
    n.pending_output = res.pending_output;
    PhaseFigures f;
    f.phase = "phase 3b";
    f.seconds = end.wall - start.wall;
    f.cpu_seconds = end.cpu - start.cpu;
    f.bytes_received = res.bytes_received;
    f.bytes_read = res.bytes_local;
    f.bytes_written = res.records * n.format.record_size;
    reply(n.rio, in, f);
}

// Every node merged: the outputs take their names. They stay tracked, so an abort still
// removes them, until the monitor's final word.
void do_commit(Node &n, rio_incoming_t *in) {
    n.set_progress("commit", 0, 0);
    Status s = n.pending_output.empty() ? Status::error("nothing to commit: no merged output")
                                        : cleanup::commit(n.pending_output, n.output);
    if (s) {
        n.pending_output.clear();
        n.committed = true;
        // A signal from now on waits (bounded) for the final word, which is on its way.
        cleanup::set_interrupt_hook([word = n.final_word, stall = n.opts.stall_ms] {
            std::unique_lock<std::mutex> lk(word->mu);
            word->cv.wait_for(lk, std::chrono::milliseconds(stall), [&] { return word->heard; });
        });
        rio_reply(n.rio, in, RIO_OK, nullptr, 0);
    } else {
        reply_error(n.rio, in, s.message());
    }
}

// The monitor's final word: keep the output (success) or remove everything (abort).
int do_done(Node &n, rio_incoming_t *in, const rio_request_info_t &info) {
    uint32_t abort_job = 1;
    if (info.len == sizeof abort_job) std::memcpy(&abort_job, info.data, sizeof abort_job);
    if (abort_job || !n.committed) {
        cleanup::remove_all();  // a failed job leaves nothing that could pass for its output
        n.job_dir.clear();
    } else {
        cleanup::untrack(n.output);
    }
    {
        std::lock_guard<std::mutex> lk(n.final_word->mu);
        n.final_word->heard = true;
    }
    n.final_word->cv.notify_all();
    rio_stats_t st{};
    rio_get_stats(n.rio, &st);
    PhaseFigures f;
    f.phase = "served";
    f.bytes_sent = st.bytes_read;
    reply(n.rio, in, f);
    return abort_job || !n.committed ? 1 : 0;
}

}  // namespace

int node_main(const JobOptions &opts, msg_context_t *msg, int rank, int monitor) {
    Node n(opts, msg, rank);
    n.job_id = opts.job_id;
    if (n.job_id.empty()) n.job_id = std::string("p").append(std::to_string(getpid()));
    set_whereabouts("node " + std::to_string(rank), "waiting for the monitor");
    n.input = expand(opts.input, rank);
    n.output = expand(opts.output, rank);
    if (!opts.scratch.empty()) {
        n.scratch = expand(opts.scratch, rank);
    } else {
        n.scratch = split_path(n.output).dir;
    }
    msg_cq_t *cq = nullptr;
    if (msg_cq_create(msg, &cq) != MSG_OK) return 1;
    if (rio_init(msg, cq, nullptr, &n.rio) != RIO_OK) {
        std::fprintf(stderr, "sortapp: node %d: cannot start its shadow thread\n", rank);
        return 1;
    }
    n.probe_bytes.assign(16u << 20, 0);
    rio_set_handler(n.rio, kCmdSamples, on_select, &n);
    rio_set_handler(n.rio, kCmdCounts, on_select, &n);
    rio_set_handler(n.rio, kCmdProbe, on_probe, &n);
    rio_set_handler(n.rio, kCmdProgress, on_progress, &n);
    rio_set_handler(n.rio, kCmdAbort, on_abort, &n);
    rio_set_handler(n.rio, kCmdPing, answer_ping, nullptr);

    int exit_code = 1;
    {
        // From here on a monitor that dies or stops answering ends this node.
        Watch monitor_watch(n.rio, msg, monitor, opts.stall_ms, "the monitor");
        for (bool done = false; !done;) {
            msg_completion_t c;
            int rc = msg_cq_wait(cq, -1, &c);
            if (rc != MSG_OK) {
                std::fprintf(stderr, "sortapp: %s: waiting for orders: %s\n", whereabouts().c_str(),
                             msg_strerror(rc));
                break;
            }
            if (c.op != RIO_OP_REQUEST) continue;
            auto *in = static_cast<rio_incoming_t *>(c.cookie);
            rio_request_info_t info;
            rio_incoming_info(in, &info);
            if (info.source != monitor) {
                reply_error(n.rio, in, "only the monitor gives orders");
                continue;
            }
            switch (info.command) {
                case kCmdCheck:
                    do_check(n, in, info);
                    break;
                case kCmdLocal:
                    do_local(n, in, info);
                    break;
                case kCmdNetProbe:
                    do_net_probe(n, in, monitor);
                    break;
                case kCmdMerge:
                    do_merge(n, in, info, monitor);
                    break;
                case kCmdCommit:
                    do_commit(n, in);
                    break;
                case kCmdDone:
                    exit_code = do_done(n, in, info);
                    done = true;
                    break;
                default:
                    reply_error(n.rio, in, "unknown command");
            }
        }
    }
    if (exit_code != 0) cleanup::remove_all();
    int rc = rio_finalize(n.rio);
    if (rc != RIO_OK && exit_code == 0) exit_code = 1;
    {
        std::lock_guard<std::mutex> lk(n.source_mu);
        n.source.reset();
    }
    rio_destroy(n.rio);
    msg_cq_destroy(cq);
    return exit_code;
}

}  // namespace sortapp::cluster
