// A sort process: the sorting thread (this one) does what the monitor asks —
// check, phases 1 and 2, phase 3b — while libremoteio's shadow thread serves
// every other node's remote reads of this node's work file and the monitor's
// phase 3a questions.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "messages.hpp"
#include "node.hpp"
#include "remote_merge.hpp"
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
    std::string input, output, scratch, work;
    int work_fd = -1;
    std::mutex source_mu;
    std::unique_ptr<WorkFileSource> source;  // once phase 2 is done
    DiskBandwidth disk;
    bool output_written = false;
    std::vector<char> probe_bytes;
    // What the sorting thread is doing, for the monitor's progress display.
    std::mutex progress_mu;
    std::string progress_phase = "waiting";
    uint64_t progress_done = 0, progress_total = 0;
    void set_progress(const char *phase, uint64_t done, uint64_t total) {
        std::lock_guard<std::mutex> lk(progress_mu);
        progress_phase = phase;
        progress_done = done;
        progress_total = total;
    }

    ~Node() {
        if (work_fd >= 0) close(work_fd);
        if (!work.empty()) unlink(work.c_str());
    }
};

std::string phase_resource(const std::string &) { return "disk"; }

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
    if (stat(n.input.c_str(), &st) != 0)
        return Status::from_errno("input " + n.input, errno);
    if (!S_ISREG(st.st_mode)) return Status::error("input " + n.input + " is not a regular file");
    if (access(n.input.c_str(), R_OK) != 0)
        return Status::from_errno("input " + n.input, errno);
    if (static_cast<uint64_t>(st.st_size) % n.format.record_size != 0)
        return Status::error("input " + n.input + " holds " + std::to_string(st.st_size) +
                             " bytes, not a whole number of " +
                             std::to_string(n.format.record_size) + "-byte records");
    if (n.input == n.output) return Status::error("output " + n.output + " is the input");
    auto dir_of = [](const std::string &p) {
        auto slash = p.rfind('/');
        return slash == std::string::npos ? std::string(".") : slash == 0 ? "/" : p.substr(0, slash);
    };
    std::string outdir = dir_of(n.output);
    if (access(outdir.c_str(), W_OK) != 0)
        return Status::from_errno("output directory " + outdir, errno);
    if (access(n.scratch.c_str(), W_OK) != 0)
        return Status::from_errno("scratch directory " + n.scratch, errno);
    return Status::ok();
}

double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

int node_main(const JobOptions &opts, msg_context_t *msg, int rank, int monitor) {
    Node n(opts, msg, rank);
    n.input = expand(opts.input, rank);
    n.output = expand(opts.output, rank);
    if (!opts.scratch.empty()) {
        n.scratch = expand(opts.scratch, rank);
    } else {
        auto slash = n.output.rfind('/');
        n.scratch = slash == std::string::npos ? "." : slash == 0 ? "/" : n.output.substr(0, slash);
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

    int exit_code = 0;
    for (bool done = false; !done;) {
        msg_completion_t c;
        int rc = msg_cq_wait(cq, -1, &c);
        if (rc != MSG_OK) {
            exit_code = 1;
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
            case kCmdCheck: {
                if (!decode(info.data, info.len, n.params)) {
                    reply_error(n.rio, in, "malformed parameters");
                    break;
                }
                n.format = RecordFormat{static_cast<size_t>(n.params.record_size),
                                        static_cast<size_t>(n.params.key_size)};
                Status s = n.format.validate();
                if (s) s = check_paths(n);
                NodeCheck chk;
                if (s) {
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
                }
                s ? reply(n.rio, in, chk) : reply_error(n.rio, in, s.message());
                break;
            }
            case kCmdLocal: {
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
                so.scratch_dir = n.scratch;
                so.memory_budget = n.params.memory_budget != 0 ? n.params.memory_budget
                                                               : default_memory_budget().budget;
                n.work = n.scratch + "/.sortapp-work-" + std::to_string(rank) + "-" +
                         std::to_string(getpid());
                so.progress = [&n](const char *phase, uint64_t done, uint64_t total) {
                    n.set_progress(phase, done, total);
                };
                LocalSortResult res;
                Status s = local_sort(so, n.input, n.work, disk, res);
                n.set_progress("sorted", 0, 0);
                LocalDone done_msg;
                if (s) {
                    n.work_fd = open(n.work.c_str(), O_RDONLY | O_CLOEXEC);
                    if (n.work_fd < 0) s = Status::from_errno("work file " + n.work, errno);
                }
                if (s) {
                    int rc2 = rio_export(n.rio, n.work.c_str(), 0, RIO_EXPORT_TO_END,
                                         RIO_EXPORT_READ_ONLY, &done_msg.handle);
                    if (rc2 != RIO_OK)
                        s = Status::error(std::string("exporting the work file: ") +
                                          rio_strerror(rc2));
                }
                if (s) {
                    done_msg.records = res.records;
                    for (const PhaseReport &p : res.phases) done_msg.phases.push_back(from_report(p));
                    std::lock_guard<std::mutex> lk(n.source_mu);
                    n.source = std::make_unique<WorkFileSource>(n.work_fd, res.records, n.format);
                }
                s ? reply(n.rio, in, done_msg) : reply_error(n.rio, in, s.message());
                break;
            }
            case kCmdNetProbe: {
                // Pull from the next node's shadow thread for a fixed volume.
                int peers = monitor;  // nodes are ranks 0..monitor-1
                int dest = (rank + 1) % peers;
                const uint64_t piece = 4u << 20;
                const int pieces = 8;
                std::vector<char> buf(piece);
                double t0 = seconds_now();
                Status s;
                for (int i = 0; i < pieces && s; ++i) {
                    size_t got = 0;
                    int rc2 = rio_call(n.rio, dest, RIO_TARGET_SHADOW, kCmdProbe, &piece,
                                       sizeof piece, buf.data(), buf.size(), &got);
                    if (rc2 != RIO_OK || got != piece)
                        s = Status::error(std::string("network probe: ") + rio_strerror(rc2));
                }
                double mbps = static_cast<double>(piece) * pieces / (seconds_now() - t0) / 1e6;
                if (s) {
                    PhaseFigures f;
                    f.phase = "network probe";
                    f.bytes_received = piece * pieces;
                    f.seconds = mbps > 0 ? piece * pieces / (mbps * 1e6) : 0;
                    reply(n.rio, in, f);
                } else {
                    reply_error(n.rio, in, s.message());
                }
                break;
            }
            case kCmdMerge: {
                MergeOrder order;
                if (!decode(info.data, info.len, order) ||
                    order.handles.size() != static_cast<size_t>(monitor)) {
                    reply_error(n.rio, in, "malformed merge order");
                    break;
                }
                Stopwatch start = Stopwatch::now();
                RemoteMergeResult res;
                Status s = remote_merge(n.rio, msg, rank, n.format, order,
                                        static_cast<size_t>(n.params.block_bytes),
                                        n.params.read_depth, n.output, res,
                                        [&n](uint64_t done, uint64_t total) {
                                            n.set_progress("phase 3b", done, total);
                                        });
                n.set_progress("merged", 0, 0);
                Stopwatch end = Stopwatch::now();
                if (s) {
                    n.output_written = true;
                    PhaseFigures f;
                    f.phase = "phase 3b";
                    f.seconds = end.wall - start.wall;
                    f.cpu_seconds = end.cpu - start.cpu;
                    f.bytes_received = res.bytes_received;
                    f.bytes_read = res.bytes_local;
                    f.bytes_written = res.records * n.format.record_size;
                    reply(n.rio, in, f);
                } else {
                    reply_error(n.rio, in, s.message());
                }
                break;
            }
            case kCmdDone: {
                uint32_t abort_job = 0;
                if (info.len == sizeof abort_job) std::memcpy(&abort_job, info.data, sizeof abort_job);
                // A failed job leaves no output that could pass for a sorted partition.
                if (abort_job && n.output_written) unlink(n.output.c_str());
                rio_stats_t st{};
                rio_get_stats(n.rio, &st);
                PhaseFigures f;
                f.phase = "served";
                f.bytes_sent = st.bytes_read;
                reply(n.rio, in, f);
                done = true;
                exit_code = abort_job ? 1 : 0;
                break;
            }
            default:
                reply_error(n.rio, in, "unknown command");
        }
    }
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
