// A path's directory and last component, as text (no file system access).
#pragma once

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

}  // namespace viaduct
