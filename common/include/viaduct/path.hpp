// A path's directory and last component, as text (no file system access), and the running
// program's own path (the one call here that asks the kernel).
#pragma once

#include <limits.h>
#include <unistd.h>

#include <string>

namespace viaduct {

struct PathParts {
    std::string dir, base;
};

// The directory of `path` ("." for a bare name, "/" at the root) and its last component.
inline PathParts split_path(const std::string &path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

inline std::string path_dir(const std::string &path) {
    return split_path(path).dir;
}

inline std::string path_base(const std::string &path) {
    return split_path(path).base;
}

// The running program's path (/proc/self/exe), or "" when the kernel does not say: the
// project's programs find their companions (msgrun, msg-info, sortapp-job) beside it.
inline std::string self_exe() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace viaduct
