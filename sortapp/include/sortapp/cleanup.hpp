// What this process created and must remove if it stops before finishing: temporary outputs,
// run directories, work files, and outputs a failed job had already completed. A signal
// (SIGINT, SIGTERM, SIGHUP) or a fatal error found on any thread removes them and ends the
// process; inputs are never tracked, so they are never removed.
#pragma once

#include <functional>
#include <string>

#include "sortapp/status.hpp"

namespace sortapp::cleanup {

// Tracks a file, or a directory removed with everything in it.
void track(const std::string &path);
// Runs `make` (which creates a file or directory and sets `path` to it) and tracks what it
// made, both under the registry's lock, so that a signal arriving meanwhile cannot remove
// everything tracked between the creation and the tracking. Refuses once the process is
// stopping. Returns what `make` returned.
Status create(const std::function<Status(std::string &path)> &make);
// Stops tracking (the file is kept, or was removed by its owner).
void untrack(const std::string &path);
// Removes a tracked path now and stops tracking it.
void remove(const std::string &path);
// Renames `from` to `to` unless the process is being torn down, then syncs `to`'s directory
// (the rename is durable when this returns); `to` stays tracked (an abort still removes it)
// until untrack(to).
Status commit(const std::string &from, const std::string &to);
// Removes everything tracked (also what another thread is about to commit), prints `message`
// to stderr and ends the process with `code`. Safe from any thread.
[[noreturn]] void abort_process(int code, const std::string &message);
// Removes everything tracked. For orderly error paths that then return normally.
void remove_all();

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread, and so in every thread it starts
// afterwards (call it before any thread exists), and starts a thread that, on one of them,
// prints "<describe()>: interrupted by SIGxxx", removes everything tracked and ends the
// process by that same signal.
void install_signal_cleanup(std::function<std::string()> describe);

// Runs on the signal thread before anything is removed (empty: none). A process at a point
// where removing would be wrong for the whole job (a node that has renamed its output and
// is about to hear whether the job succeeded) waits there, bounded, for that point to pass.
void set_interrupt_hook(std::function<void()> hook);

}  // namespace sortapp::cleanup
