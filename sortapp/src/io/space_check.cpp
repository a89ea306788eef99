// Free space against what a sort will write (see space_check.hpp).
#include "sortapp/space_check.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace sortapp {

Status check_space(const std::vector<SpaceNeed> &needs) {
    struct Disk {
        std::uint64_t bytes = 0, free = ~0ull;
        std::string what;
    };
    std::map<std::string, Disk> disks;
    for (const SpaceNeed &n : needs) {
        if (n.bytes == 0) continue;
        Disk &d = disks[n.disk];
        d.bytes += n.bytes;
        d.free = std::min(d.free, n.free);
        d.what += (d.what.empty() ? "" : ", ") + n.what + " " + human_bytes(n.bytes);
    }
    for (const auto &[name, d] : disks)
        if (d.bytes > d.free)
            return Status::error("not enough disk space: " + d.what + " need " +
                                 human_bytes(d.bytes) + " on one disk (" + name + "), which has " +
                                 human_bytes(d.free) + " free");
    return Status::ok();
}

bool disk_space(const std::string &dir, std::string &disk, std::uint64_t &free) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return false;
    disk = "device " + std::to_string(std::uint64_t(st.st_dev));
    // A file system that reports no blocks at all (ramfs, some network and FUSE ones) does
    // not know its free space: nothing is checked there.
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0 || vfs.f_blocks == 0) return false;
    free = std::uint64_t(vfs.f_bavail) * vfs.f_frsize;
    return true;
}

std::string human_bytes(std::uint64_t bytes) {
    const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1000 && u < 6) v /= 1000, ++u;
    char text[32];
    std::snprintf(text, sizeof text,
                  u == 0   ? "%.0f %s"
                  : v < 10 ? "%.1f %s"
                           : "%.0f %s",
                  v, units[u]);
    return text;
}

}  // namespace sortapp
