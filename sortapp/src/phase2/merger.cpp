// Phase 2: loser-tree merge of runs, in as many passes as the memory budget requires.
#include "sortapp/merger.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "phase2/merge_stream.hpp"
#include "sortapp/loser_tree.hpp"
#include "sortapp/sequential_writer.hpp"

namespace sortapp {

namespace {

struct MergeProgress {
    const SortOptions &options;
    std::uint64_t total;
    std::uint64_t done = 0;
};

// Merges `runs` into `out`; the run files are removed once merged.
Status merge_group(const SortOptions &o, const MemoryPlan &memory, const MergePlan &plan,
                   const std::vector<Run> &runs, File &out, bool sync, MergeProgress &progress) {
    const std::size_t rs = o.format.record_size, ks = o.format.key_size;
    IoRing ring;
    SORTAPP_TRY(ring.init(unsigned(plan.stream_depth * runs.size() + memory.write_buffers + 2)));
    std::vector<std::unique_ptr<MergeStream>> streams;
    for (const Run &run : runs) {
        streams.push_back(
            std::make_unique<MergeStream>(ring, o.format, plan.stream_buffer, plan.stream_depth));
        SORTAPP_TRY(streams.back()->open(run.path, o.direct_io));
    }
    SequentialWriter writer(ring, out, memory.write_buffer, memory.write_buffers);
    MergeStream **s = nullptr;
    std::vector<MergeStream *> raw;
    for (auto &p : streams) raw.push_back(p.get());
    s = raw.data();
    auto less = [s, ks](std::size_t a, std::size_t b) {
        if (s[a]->prefix() != s[b]->prefix()) return s[a]->prefix() < s[b]->prefix();
        return ks > 8 && std::memcmp(s[a]->record() + 8, s[b]->record() + 8, ks - 8) < 0;
    };
    auto exhausted = [s](std::size_t a) { return s[a]->record() == nullptr; };
    LoserTree tree(raw.size(), less, exhausted);
    const std::uint64_t report_every = 8u << 20;
    std::uint64_t since_report = 0;
    for (std::size_t w; (w = tree.winner()) < raw.size();) {
        SORTAPP_TRY(writer.append(s[w]->record(), rs));
        SORTAPP_TRY(s[w]->advance());
        tree.replay();
        since_report += rs;
        if (since_report >= report_every) {
            progress.done += since_report;
            since_report = 0;
            if (o.progress) o.progress("phase 2", progress.done, progress.total);
        }
    }
    progress.done += since_report;
    if (o.progress) o.progress("phase 2", progress.done, progress.total);
    SORTAPP_TRY(writer.finish(sync));
    for (const Run &run : runs) ::unlink(run.path.c_str());
    return Status::ok();
}

}  // namespace

Status merge_runs(const SortOptions &o, const MemoryPlan &memory, std::vector<Run> runs,
                  File &output, const std::string &run_dir, MergeReport &report) {
    report = MergeReport();
    report.plan = plan_merge(o, memory, runs.size());
    std::uint64_t bytes = 0;
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
            Status s = merge_group(o, memory, report.plan, group, file, false, progress);
            if (!s) {
                ::unlink(merged.path.c_str());
                return s;
            }
            next.push_back(merged);
        }
        runs = std::move(next);
    }
    report.passes = level + 1;
    return merge_group(o, memory, report.plan, runs, output, true, progress);
}

}  // namespace sortapp
