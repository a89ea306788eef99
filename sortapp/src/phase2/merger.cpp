// Phase 2: loser-tree merge of runs, in as many passes as the memory budget requires.
#include "sortapp/merger.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "sortapp/record_stream.hpp"
#include "sortapp/sequential_writer.hpp"
#include "sortapp/sorted_run.hpp"
#include "sortapp/space_reclaimer.hpp"
#include "sortapp/stream_merge.hpp"

namespace sortapp {

namespace {

struct MergeProgress {
    const SortOptions &options;
    std::uint64_t total;
    std::uint64_t done = 0;
};

// Opens the runs as record streams read through `ring`, the kept run's among them, and starts
// them; what the merge has read of a run file goes back to the file system as it goes.
Status open_runs(const SortOptions &o, const MergePlan &plan, IoRing &ring,
                 SpaceReclaimer &reclaimer, const std::vector<Run> &runs, const KeptRun &kept,
                 RecordStreams &streams) {
    for (const Run &run : runs) {
        auto file = std::make_unique<FileSource>(ring);
        SORTAPP_TRY(file->open(run.path, o.direct_io));
        file->release_consumed(reclaimer, run.path);
        const std::uint64_t size = file->file().size();
        if (size % o.format.record_size != 0)
            return Status::error(run.path + ": run has a partial record");
        streams.push_back(std::make_unique<RecordStream>(std::move(file), o.format, 0, size,
                                                         plan.stream_buffer, plan.stream_depth));
    }
    if (kept.run != nullptr) {
        const std::size_t rs = o.format.record_size;
        auto source = std::make_unique<SortedRunSource>(*kept.run, rs);
        auto stream =
            std::make_unique<RecordStream>(std::move(source), o.format, 0, kept.run->count * rs,
                                           plan.stream_buffer, plan.stream_depth);
        streams.insert(streams.begin() + std::ptrdiff_t(kept.at), std::move(stream));
    }
    return start_streams(streams);
}

// Merges `runs` and the kept run, if any, into `out`; the run files are removed once merged.
Status merge_group(const SortOptions &o, const MemoryPlan &memory, const MergePlan &plan,
                   const std::vector<Run> &runs, const KeptRun &kept, File &out, bool sync,
                   MergeProgress &progress) {
    IoRing ring;
    SORTAPP_TRY(ring.init(unsigned(plan.stream_depth * runs.size() + memory.write_buffers + 2)));
    RecordStreams streams;
    SpaceReclaimer reclaimer;
    SORTAPP_TRY(open_runs(o, plan, ring, reclaimer, runs, kept, streams));
    std::uint64_t records = kept.run != nullptr ? kept.run->count : 0;
    for (const Run &r : runs) records += r.records;
    SORTAPP_TRY(out.reserve(records * o.format.record_size));
    SequentialWriter writer(ring, out, memory.write_buffer, memory.write_buffers);
    auto report = [&](std::uint64_t merged) {
        if (o.progress) o.progress("phase 2", progress.done + merged, progress.total);
    };
    std::uint64_t merged = 0;
    SORTAPP_TRY(merge_streams(o.format, streams, writer, 8u << 20, report, merged));
    progress.done += merged;
    if (o.progress) o.progress("phase 2", progress.done, progress.total);
    SORTAPP_TRY(writer.finish(sync));
    for (const Run &run : runs) ::unlink(run.path.c_str());
    return Status::ok();
}

}  // namespace

Status merge_runs(const SortOptions &o, const MemoryPlan &memory, std::vector<Run> runs,
                  const KeptRun &kept, File &output, const std::string &run_dir,
                  MergeReport &report) {
    report = MergeReport();
    const std::size_t streams = runs.size() + (kept.run != nullptr ? 1 : 0);
    report.plan = plan_merge(o, memory, streams);
    if (kept.run != nullptr && (streams > report.plan.fan_in || kept.at > runs.size()))
        return Status::error("a run kept in memory needs a one-pass merge");
    std::uint64_t bytes = kept.run != nullptr ? kept.run->count * o.format.record_size : 0;
    for (const Run &r : runs) bytes += r.records * o.format.record_size;
    MergeProgress progress{o, bytes * report.plan.passes};
    const std::size_t fan_in = report.plan.fan_in;
    unsigned level = 0;
    while (runs.size() > fan_in) {
        ++level;
        std::vector<Run> next;
        for (std::size_t g = 0; g < runs.size(); g += fan_in) {
            std::vector<Run> group(
                runs.begin() + std::ptrdiff_t(g),
                runs.begin() + std::ptrdiff_t(std::min(runs.size(), g + fan_in)));
            if (group.size() == 1) {
                next.push_back(group[0]);
                progress.done += group[0].records * o.format.record_size;
                continue;
            }
            char name[48];
            std::snprintf(name, sizeof name, "/merge-%u-%06zu", level, g / fan_in);
            Run merged{run_dir + name, 0};
            for (const Run &r : group) merged.records += r.records;
            File file;
            SORTAPP_TRY(File::create(merged.path, o.direct_io, false, file));
            Status s = merge_group(o, memory, report.plan, group, KeptRun{}, file, false, progress);
            if (!s) {
                ::unlink(merged.path.c_str());
                return s;
            }
            next.push_back(merged);
        }
        runs = std::move(next);
    }
    report.passes = level + 1;
    return merge_group(o, memory, report.plan, runs, kept, output, true, progress);
}

}  // namespace sortapp
