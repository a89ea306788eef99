// Aliasing checks on the job's paths: an output may never be, or replace, an input. Files are
// compared by device and inode (hard links and symbolic links included); a file that does not
// exist yet is compared by its normalised absolute path.
#pragma once

#include <sys/types.h>

#include <string>

#include "options.hpp"
#include "sortapp/status.hpp"
#include "viaduct/path.hpp"

namespace sortapp::cluster {

struct PathId {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    std::string normal;  // absolute, with the directory's symbolic links resolved
};

using viaduct::split_path;

PathId path_id(const std::string &path);
bool same_file(const PathId &a, const PathId &b);

// With more than one node: an --output without {rank}, or an --input without it unless
// --same-input says so.
Status check_patterns(const JobOptions &o, int nodes);
// Every node's input and output on this host (`sortapp run`): patterns without {rank} where
// they must have it, an output that is any node's input, two nodes writing one output.
Status check_job_paths(const JobOptions &o, int nodes);

// --timeline's directory, where the monitor runs: one it may create files in (as the timeline
// writer will check it: this user's or root's, not writable by everyone without the sticky
// bit), or one it may create; and none of its four files any node's input or output on this
// host (`nodes` of them; 0 where the nodes' files are on other hosts).
Status check_timeline_dir(const JobOptions &o, int nodes);

}  // namespace sortapp::cluster
