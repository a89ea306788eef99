// `sortapp local`: checks the arguments, plans memory, runs phase 1 and (when needed) phase 2,
// and reports each phase against its expectation. Nothing appears at the output path unless
// the sort succeeded, and no scratch file outlives the call.
#include "sortapp/local_sort.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sortapp/cleanup.hpp"
#include "sortapp/expectation.hpp"
#include "sortapp/input_identity.hpp"
#include "sortapp/merger.hpp"
#include "sortapp/pending_file.hpp"
#include "sortapp/run_former.hpp"
#include "sortapp/space_check.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

namespace sortapp {

namespace {

// A private directory for the runs, removed with everything in it.
class ScratchDir {
  public:
    ScratchDir() = default;
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;
    ~ScratchDir() {
        if (!path_.empty()) cleanup::remove(path_);
    }
    Status create(const std::string &base) {
        // Not where another user may rename or replace what is put there (the runs would be
        // reached through a directory they could swap).
        const std::string why = viaduct::dir_refusal(base, viaduct::DirTrust::shared);
        if (!why.empty()) return Status::error("not writing runs there: " + why);
        // Tracked: a signal or a fatal error elsewhere removes it too.
        return cleanup::create([&](std::string &path) {
            std::string templ = base + "/sortapp-runs.XXXXXX";
            std::vector<char> buf(templ.begin(), templ.end());
            buf.push_back('\0');
            if (::mkdtemp(buf.data()) == nullptr)
                return Status::from_errno("cannot create a scratch directory in " + base, errno);
            path = path_ = buf.data();
            return Status::ok();
        });
    }
    const std::string &path() const { return path_; }

  private:
    std::string path_;
};

PhaseReport finish_phase(const char *name, const Stopwatch &start, std::uint64_t bytes,
                         double expected, std::string note) {
    Stopwatch end = Stopwatch::now();
    PhaseReport r;
    r.name = name;
    r.bytes = bytes;
    r.seconds = end.wall - start.wall;
    r.cpu_seconds = end.cpu - start.cpu;
    r.expected_seconds = expected;
    r.note = std::move(note);
    r.stale = beats_expectation(r.seconds, r.expected_seconds);
    return r;
}

// A phase that beat its expectation: warn at once (the figure is stale); once the sort is over
// its cache entry is marked stale, never re-measured inside the sort.
void report_phase(LocalSortResult &result, const DiskBandwidth &disk,
                  const std::function<void(const PhaseReport &)> &on_phase) {
    PhaseReport &r = result.phases.back();
    if (r.stale) {
        if (disk.source.warn_stale) warn_stale_figure(r.name, r.seconds, r.expected_seconds, disk);
        r.note += r.note.empty() ? "figure stale" : "; figure stale";
        result.figure_stale = true;
    }
    if (on_phase) on_phase(r);
}

// The input is a regular file of whole records, and the output is not the input.
Status check_paths(const std::string &input, const std::string &output, std::size_t rs,
                   struct stat &in_st) {
    struct stat out_st {};
    if (::stat(input.c_str(), &in_st) != 0) {
        return Status::from_errno("cannot read input " + input, errno);
    }
    if (!S_ISREG(in_st.st_mode)) return Status::error("input " + input + " is not a regular file");
    if (input == output || (::stat(output.c_str(), &out_st) == 0 && out_st.st_dev == in_st.st_dev &&
                            out_st.st_ino == in_st.st_ino)) {
        return Status::error("output " + output +
                             " is the input file: sortapp does not sort in place");
    }
    if (std::uint64_t(in_st.st_size) % rs != 0) {
        return Status::error("input " + input + ": size " + std::to_string(in_st.st_size) +
                             " bytes is not a multiple of the record size (" + std::to_string(rs) +
                             " bytes)");
    }
    return Status::ok();
}

// Before any work: the output, and the runs when there are any, fit where they go.
Status check_local_space(const SortOptions &o, const std::string &output, std::uint64_t bytes,
                         bool one_pass) {
    std::vector<SpaceNeed> needs;
    const std::string outdir = viaduct::path_dir(output);
    SpaceNeed out{"", "the output in " + outdir, bytes, 0};
    if (disk_space(outdir, out.disk, out.free)) needs.push_back(out);
    SpaceNeed runs{"", "the runs in " + o.scratch_dir, bytes, 0};
    if (!one_pass && disk_space(o.scratch_dir, runs.disk, runs.free)) needs.push_back(runs);
    return check_space(needs);
}

// `name`'s index in local_sort_phases(), or the table's size for a name not in it.
std::uint32_t phase_index(const std::string &name) {
    const std::vector<std::string> &names = local_sort_phases();
    return static_cast<std::uint32_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace

const std::vector<std::string> &local_sort_phases() {
    static const std::vector<std::string> names = {"starting", "phase 1", "phase 2", "finishing"};
    return names;
}

void LocalSortProgress::progress(const char *phase, std::uint64_t done, std::uint64_t) {
    const std::uint32_t index = phase_index(phase);
    if (index < local_sort_phases().size() && index != phase_.load(std::memory_order_relaxed)) {
        phase_.store(index, std::memory_order_relaxed);
        phase_done_ = 0;
    }
    // Phase 1 counts every byte twice, read and written; the merge counts it once per pass.
    const std::uint64_t work = std::strcmp(phase, "phase 1") == 0 ? done / 2 : done;
    if (work > phase_done_) {
        bytes_.fetch_add(work - phase_done_, std::memory_order_relaxed);
        phase_done_ = work;
    }
}

void LocalSortProgress::phase_ended(const PhaseReport &report) {
    // A phase's last progress call may fall short of its last few records; its report counts
    // them all.
    if (report.bytes > phase_done_) {
        bytes_.fetch_add(report.bytes - phase_done_, std::memory_order_relaxed);
        phase_done_ = report.bytes;
    }
    if (report.name != "phase 1") phase_.store(phase_index("finishing"), std::memory_order_relaxed);
}

Status local_sort(const SortOptions &options_in, const std::string &input,
                  const std::string &output, const DiskBandwidth &disk, LocalSortResult &result,
                  const std::function<void(const PhaseReport &)> &on_phase) {
    result = LocalSortResult();
    SortOptions o = options_in;
    o.threads = std::max(1u, o.threads);
    SORTAPP_TRY(o.format.validate());
    const std::size_t rs = o.format.record_size;

    struct stat in_st {};
    SORTAPP_TRY(check_paths(input, output, rs, in_st));
    // Direct I/O needs runs that start on block boundaries.
    const bool aligned_runs = records_per_io_unit(o.format) * rs % io_alignment == 0;
    File in;
    SORTAPP_TRY(File::open_read(input, o.direct_io && aligned_runs, in));
    const std::uint64_t records = std::uint64_t(in_st.st_size) / rs;
    const std::uint64_t bytes = records * rs;
    result.records = records;
    SORTAPP_TRY(plan_memory(o, records, result.memory));
    if (!aligned_runs) o.direct_io = false;
    if (o.check_space)
        SORTAPP_TRY(check_local_space(o, output, bytes, result.memory.one_pass || records == 0));

    PendingFile out;
    SORTAPP_TRY(out.create(output, o.direct_io));
    ScratchDir scratch;
    if (!result.memory.one_pass && records > 0) SORTAPP_TRY(scratch.create(o.scratch_dir));

    auto expected = [&](const PhaseVolume &v) { return expected_seconds(v, disk.rates()); };
    Stopwatch start = Stopwatch::now();
    RunFormation runs;
    SORTAPP_TRY(form_runs(o, result.memory, in, records, out.file, scratch.path(), runs));
    result.one_pass = runs.one_pass;
    result.runs = runs.runs.size() + (runs.kept ? 1 : 0);
    result.kept_records = runs.kept ? runs.kept->count : 0;
    const std::uint64_t kept_bytes = result.kept_records * rs;
    char note[160];
    if (runs.one_pass) {
        std::snprintf(note, sizeof note, "in-core sort %.2f s", runs.sort_seconds);
        result.phases.push_back(
            finish_phase("one-pass", start, bytes, expected(formation_volume(bytes, 0)), note));
        report_phase(result, disk, on_phase);
    } else {
        std::snprintf(note, sizeof note, "%zu runs of up to %llu records%s, in-core sort %.2f s",
                      result.runs, static_cast<unsigned long long>(result.memory.run_records),
                      runs.kept ? " (the last kept in memory)" : "", runs.sort_seconds);
        result.phases.push_back(finish_phase("phase 1", start, bytes,
                                             expected(formation_volume(bytes, kept_bytes)), note));
        report_phase(result, disk, on_phase);

        start = Stopwatch::now();
        MergeReport merge;
        SORTAPP_TRY(merge_runs(o, result.memory, runs.runs, KeptRun{runs.kept.get(), runs.kept_at},
                               out.file, scratch.path(), merge));
        runs.kept.reset();
        result.merge = merge.plan;
        result.merge_passes = merge.passes;
        std::snprintf(note, sizeof note,
                      "%u merge pass%s, fan-in %zu, %u x %zu KiB prefetch buffers per run",
                      merge.passes, merge.passes == 1 ? "" : "es", merge.plan.fan_in,
                      merge.plan.stream_depth, merge.plan.stream_buffer >> 10);
        result.phases.push_back(
            finish_phase("phase 2", start, bytes,
                         expected(merge_volume(bytes, merge.passes, kept_bytes)), note));
        report_phase(result, disk, on_phase);
    }
    SORTAPP_TRY(check_input_unchanged(input, identity_of(in_st)));
    SORTAPP_TRY(out.commit());
    if (result.figure_stale) {
        result.stale_note = mark_stale_figure(disk);
        for (PhaseReport &r : result.phases)
            if (r.stale) r.note += " (" + result.stale_note + ")";
    }
    return Status::ok();
}

}  // namespace sortapp
