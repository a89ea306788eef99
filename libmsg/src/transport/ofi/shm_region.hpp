// The shm provider's endpoint region in /dev/shm, seen from libmsg: the space
// it takes is reserved when it is made, and a /dev/shm too small is named.
#pragma once

#include <cstdint>
#include <string>

namespace msg {

// Where POSIX shared memory lives on Linux, and so the shm provider's regions.
inline constexpr const char *kShmDir = "/dev/shm";

// libfabric 1.17's shm region with its default queues (1024 sends, 1024
// receives): what its fi_getinfo asks /dev/shm to hold once per online CPU.
inline constexpr uint64_t kShmRegionBytes = uint64_t{16} << 20;

// "/dev/shm has 3.0 MiB free of 40.0 MiB" (or why that cannot be said).
std::string shm_space_text();

// Why the shm provider may have refused to start: "" unless /dev/shm holds
// less than it asks for (kShmRegionBytes per online CPU), else a sentence
// naming /dev/shm, its free space and what is asked.
std::string shm_refusal();

// Makes every page of the region shm_open knows as `name` take its space in
// /dev/shm now (posix_fallocate), so a full /dev/shm is this error, not a
// SIGBUS when the provider first touches a page. Returns 0, or a negative
// errno with *error naming the region, /dev/shm and its free space.
int reserve_shm_region(const std::string &name, std::string *error);

}  // namespace msg
