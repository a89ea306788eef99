// The DataPump's files: the input opened for deep reads, the output written
// under a temporary name in its directory and renamed into place only when
// complete (removed on failure or on a stopping signal), and the check that
// the output is not the input.
#pragma once

#include <cstdint>
#include <string>

#include "pump.hpp"

namespace pump {

// Opens `path` for reading (O_DIRECT first when `direct`) and fills m's size,
// mode and identity. On failure returns false with *why.
bool open_input(const std::string &path, bool direct, int *fd, bool *is_direct, Meta *m,
                std::string *why);

// Null if writing `path` cannot replace the file `m` describes, else why.
std::string refuse_output(const std::string &path, const Meta &m);

class PendingOutput {
  public:
    PendingOutput() = default;
    PendingOutput(const PendingOutput &) = delete;
    PendingOutput &operator=(const PendingOutput &) = delete;
    // Removes the temporary file unless committed.
    ~PendingOutput();

    // Creates the temporary file next to `path` (O_DIRECT where possible when `direct`).
    bool create(const std::string &path, uint32_t mode, bool direct, std::string *why);
    // Reserves the file's `bytes` on disk ahead (viaduct::reserve_space): a disk too small
    // fails now, by name.
    bool reserve(uint64_t bytes, std::string *why);
    // Drops O_DIRECT (for a tail that is not a multiple of the block).
    bool set_buffered(std::string *why);
    // Flushes to disk, renames into place.
    bool commit(std::string *why);

    int fd() const { return fd_; }
    bool direct() const { return direct_; }
    const std::string &temp_path() const { return temp_; }

  private:
    int fd_ = -1;
    bool direct_ = false, committed_ = false;
    std::string path_, temp_;
};

}  // namespace pump
