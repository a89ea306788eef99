// Free space, checked before any work: what the runs, work files and outputs will take,
// summed over everything that shares a disk, against what statvfs says is free there. A sort
// that cannot fit is refused with the figures instead of failing hours later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sortapp/status.hpp"

namespace sortapp {

struct SpaceNeed {
    std::string disk;         // which disk ("host:device"); needs on one disk add up
    std::string what;         // what is written there ("node 2's output in /data")
    std::uint64_t bytes = 0;  // what it takes
    std::uint64_t free = 0;   // what the disk has free (the same for every need on it)
};

// An error naming the first disk whose needs add up to more than it has free.
Status check_space(const std::vector<SpaceNeed> &needs);

// The disk holding `dir` ("device <st_dev>", set whenever `dir` exists) and the bytes free
// there for this user; false when that free space is not known (no such directory, or a
// file system that does not know its size, such as ramfs).
bool disk_space(const std::string &dir, std::string &disk, std::uint64_t &free);

// Bytes as people read them: "1.5 GB", "78 GB", "900 MB" (decimal units, as df -H).
std::string human_bytes(std::uint64_t bytes);

}  // namespace sortapp
