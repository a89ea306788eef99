// An input as it was when the sort began. Compared again at the end, before any output is
// published: records appended, the file overwritten in place, or another file renamed over
// it would otherwise give an output that is sorted yet not the input's.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "sortapp/status.hpp"

namespace sortapp {

struct InputIdentity {
    std::uint64_t dev = 0, ino = 0, size = 0;
    timespec mtime{}, ctime{};
    bool known = false;
};

inline InputIdentity identity_of(const struct stat &st) {
    InputIdentity id;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = std::uint64_t(st.st_size);
    id.mtime = st.st_mtim;
    id.ctime = st.st_ctim;
    id.known = true;
    return id;
}

// The input's identity now, by its path.
inline Status capture_input(const std::string &path, InputIdentity &out) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::from_errno("input " + path, errno);
    out = identity_of(st);
    return Status::ok();
}

// An error naming the input when it is not as it was at the start.
inline Status check_input_unchanged(const std::string &path, const InputIdentity &start) {
    if (!start.known) return Status::ok();
    InputIdentity now;
    if (!capture_input(path, now))
        return Status::error("input " + path + " changed while it was being sorted (it is gone)");
    auto same = [](const timespec &a, const timespec &b) {
        return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
    };
    std::string what;
    if (now.dev != start.dev || now.ino != start.ino)
        what = "another file is in its place";
    else if (now.size != start.size)
        what = "its size went from " + std::to_string(start.size) + " to " +
               std::to_string(now.size) + " bytes";
    else if (!same(now.mtime, start.mtime) || !same(now.ctime, start.ctime))
        what = "it was written to";
    if (what.empty()) return Status::ok();
    return Status::error("input " + path + " changed while it was being sorted (" + what +
                         "); no output was kept");
}

}  // namespace sortapp
