// The job's aliasing checks (see paths.hpp).
#include "paths.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "viaduct/safe_file.hpp"

namespace sortapp::cluster {

PathId path_id(const std::string &path) {
    PathId id;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
        id.exists = true;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
    }
    const auto [dir, base] = split_path(path);
    char real[PATH_MAX];
    if (::realpath(dir.c_str(), real) != nullptr)
        id.normal = std::string(real) + (std::string(real) == "/" ? "" : "/") + base;
    else
        id.normal = path;
    return id;
}

bool same_file(const PathId &a, const PathId &b) {
    if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
    return a.normal == b.normal;
}

Status check_patterns(const JobOptions &o, int nodes) {
    const bool rank_in_input = o.input.find("{rank}") != std::string::npos;
    if (nodes > 1 && o.output.find("{rank}") == std::string::npos)
        return Status::error("--output " + o.output +
                             " has no {rank}: every node would write the same file");
    if (nodes > 1 && !rank_in_input && !o.same_input)
        return Status::error("--input " + o.input +
                             " has no {rank}: every node would sort the same file (say "
                             "--same-input if that is meant)");
    return Status::ok();
}

Status check_job_paths(const JobOptions &o, int nodes) {
    SORTAPP_TRY(check_patterns(o, nodes));
    std::vector<PathId> in, out;
    for (int r = 0; r < nodes; ++r) {
        in.push_back(path_id(expand(o.input, r)));
        out.push_back(path_id(expand(o.output, r)));
    }
    for (int r = 0; r < nodes; ++r) {
        for (int k = 0; k < nodes; ++k) {
            if (same_file(out[r], in[k]))
                return Status::error("node " + std::to_string(r) + "'s output " +
                                     expand(o.output, r) + " is node " + std::to_string(k) +
                                     "'s input " + expand(o.input, k) +
                                     ": sortapp never overwrites an input");
            if (k > r && same_file(out[r], out[k]))
                return Status::error("nodes " + std::to_string(r) + " and " + std::to_string(k) +
                                     " would both write " + expand(o.output, r));
        }
    }
    return Status::ok();
}

namespace {

// The directory itself, or the nearest of its parents that exists (the one the writer's mkdir
// makes it in): a directory this process may create files in.
Status timeline_dir_usable(const std::string &dir) {
    std::string at = dir;
    struct stat st;
    while (::stat(at.c_str(), &st) != 0) {
        if (errno != ENOENT) return Status::from_errno("--timeline " + at, errno);
        const std::string up = split_path(at).dir;
        if (up == at) return Status::from_errno("--timeline " + dir, ENOENT);
        at = up;
    }
    if (!S_ISDIR(st.st_mode)) return Status::error("--timeline " + at + " is not a directory");
    if (::access(at.c_str(), W_OK | X_OK) != 0)
        return Status::from_errno("--timeline " + at, errno);
    std::string why;
    if (!viaduct::open_checked_dir(at, viaduct::DirTrust::shared, why).valid())
        return Status::error("--timeline: " + why);
    return Status::ok();
}

}  // namespace

Status check_timeline_dir(const JobOptions &o, int nodes) {
    if (o.timeline.empty()) return Status::ok();
    SORTAPP_TRY(timeline_dir_usable(o.timeline));
    for (const char *name : {"timeline.jsonl", "timeline.csv", "timeline.png", "timeline.html"}) {
        const std::string file = o.timeline + "/" + name;
        const PathId id = path_id(file);
        for (int r = 0; r < nodes; ++r)
            for (const std::string &own : {expand(o.input, r), expand(o.output, r)})
                if (same_file(id, path_id(own)))
                    return Status::error("--timeline would write " + file + ", node " +
                                         std::to_string(r) + "'s " + own);
    }
    return Status::ok();
}

}  // namespace sortapp::cluster
