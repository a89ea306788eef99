// The needle tests' injected slowdowns. With SORTAPP_TEST_NEEDLE="NODE:KIND" in the environment,
// the node whose rank is NODE is slowed the way a needle of KIND slows a node of a real cluster,
// so that a test can check that the needle finder (sortapp/needle.hpp) names that node and the
// cause its counters show. Nothing happens without the variable; another rank ignores it.
//
// cpu: other processes take the node's CPU. The node forks eight spinning children per CPU it
//   may run on when it starts, at its own priority and on its own CPUs (both inherited). They
//   are processes, not threads: the counters tell the node's CPU (/proc/self/stat) and its job
//   mates' (viaduct::JobMates) from other processes' (the host's /proc/stat less those), and a
//   thread of the node would count as its own; the children are the node's, not its launcher's,
//   so they are no job mates. A child dies with the node: PR_SET_PDEATHSIG (SIGKILL) covers a
//   node killed or ended by a signal, and the TestNeedle's destructor kills and reaps them when
//   the node returns. Where nodes share a host's CPUs (sortapp run), the children take every
//   node's CPU and show in every node's counters alike; under --bind-to core they take the
//   node's own CPU (and that of the node or monitor bound beside it) only.
//
// disk: the node's disk is slow: busy all the time, moving few bytes. For every
//   disk_share_of_progress bytes that phases 1 and 2 move, the thread that moved them has
//   disk_writers threads write disk_piece_bytes pieces of an unnamed file in the node's scratch
//   directory, each with O_DIRECT and then fdatasync (a device cache flush) before the next, and
//   waits until they are written. The device has requests in flight most of the time and the
//   flushes move no bytes: its rate while busy, the figure the finder judges, falls as a slow
//   disk's does. On this machine's virtio disk, neither less nor simpler does that: sleeping, or
//   a cgroup's io.max (which throttles above the device), leaves the device idle, and an idle
//   device is not slow; O_DSYNC writes from one thread wait in the file system's journal with
//   the device busy a tenth of the time or less; 4 KiB writes without flushes, even 32 in
//   flight, take some 40 us each, and the device still delivered hundreds of MB/s while busy.
//
// memory: the node pages. This machine and CI have no swap, so the sort's anonymous buffers
//   cannot be paged out by any memory limit; what a kernel pages under memory pressure without
//   swap is file-backed memory, read back from disk on the next touch (a major fault). The node
//   maps an unnamed file of memory_region_bytes in its scratch directory (MADV_RANDOM: no
//   read-ahead, one read per fault), and for every progress_per_fault bytes that phases 1 and 2
//   move, the sorting thread drops a page of it (MADV_DONTNEED, then POSIX_FADV_DONTNEED, which
//   evicts it from the page cache) and touches it again: a real major fault that
//   /proc/self/stat counts and the sort waits for. Needs no privilege and no cgroup (this
//   machine has cgroup v1 only; a memory.high limit would also need root).
//
// A larger partition needs no hook: the test gives one node more input.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sortapp::cluster {

// The disk needle: one disk_piece_bytes piece written and flushed for every
// disk_share_of_progress times that many bytes the local phases move, by disk_writers threads
// at once (with fewer, the device was idle between flushes half the time here).
inline constexpr std::uint64_t disk_share_of_progress = 1;
inline constexpr std::size_t disk_piece_bytes = 4096;
inline constexpr std::size_t disk_writers = 16;
// The memory needle: the mapped file's size, and one major fault for this many bytes moved.
inline constexpr std::size_t memory_region_bytes = 16 << 20;
inline constexpr std::uint64_t progress_per_fault = 16 << 10;

// The needle SORTAPP_TEST_NEEDLE injects into this node, from construction to destruction.
class TestNeedle {
  public:
    // Does nothing unless the variable names `rank`. `scratch`: the directory where the disk
    // and memory needles keep their unnamed files (gone when closed, so nothing is left).
    TestNeedle(int rank, const std::string &scratch);
    TestNeedle(const TestNeedle &) = delete;
    TestNeedle &operator=(const TestNeedle &) = delete;
    ~TestNeedle();  // kills and reaps the cpu needle's children, closes the files

  private:
    void start_hogs();
    std::vector<pid_t> hogs_;
};

// Phases 1 and 2 report progress here (`done`: bytes the phase has moved so far); the disk and
// memory needles act in the calling thread, so the sort waits for them. At once without them.
void test_needle_progress(const char *phase, std::uint64_t done);

}  // namespace sortapp::cluster
