// Exported files: byte ranges of local files published under random handles,
// the only things a peer's remote I/O can reach. Used by the API (export,
// withdraw) and by the server (looking a handle up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace remoteio {

// An exported byte range of a file. Shared with the transfers using it, so a
// withdrawal never closes a descriptor under a transfer in flight.
struct Export {
    Export() = default;
    ~Export();
    Export(const Export &) = delete;
    Export &operator=(const Export &) = delete;
    // The range mapped read-only, so that data already in the page cache can
    // be sent straight from it (no copy, no file I/O). Null if mapping failed.
    void map_range();
    // The mapped bytes [offset, offset + len) of the range if every page of
    // them is in the page cache now, else null.
    const char *resident(uint64_t offset, size_t len) const;

    int fd = -1;
    uint64_t base = 0;
    uint64_t length = 0;
    bool writable = false;
    char *map = nullptr;  // the page holding `base`, mapped for map_len bytes
    size_t map_len = 0;
    size_t map_skew = 0;  // base's offset in its page
};

// The exports of one process, by handle; any thread.
class ExportTable {
  public:
    // Opens path and publishes [offset, offset + length) of it (length
    // RIO_EXPORT_TO_END: up to the file's end now) under a fresh handle.
    int add(const char *path, uint64_t offset, uint64_t length, bool writable, uint64_t *handle);
    int withdraw(uint64_t handle);
    // The export, or null for a handle unknown or withdrawn.
    std::shared_ptr<Export> find(uint64_t handle) const;

  private:
    mutable std::mutex mu_;
    // Keyed by handles drawn at random, so that one handle tells nothing of another.
    std::map<uint64_t, std::shared_ptr<Export>> exports_;
};

}  // namespace remoteio
