// Exported files: opening and mapping an export, the page-cache residency
// check behind zero-copy reads, and the handle table.
#include "exports.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "rio/rio.h"

namespace remoteio {

namespace {

// A random 64-bit value from the kernel, or false if it gives none.
bool random64(uint64_t *out) {
    size_t got = 0;
    auto *p = reinterpret_cast<unsigned char *>(out);
    while (got < sizeof *out) {
        ssize_t n = getrandom(p + got, sizeof *out - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

Export::~Export() {
    if (map != nullptr) munmap(map, map_len);
    if (fd >= 0) close(fd);
}

void Export::map_range() {
    if (length == 0) return;
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    map_skew = static_cast<size_t>(base % page);
    map_len = static_cast<size_t>(length) + map_skew;
    void *p =
        mmap(nullptr, map_len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(base - map_skew));
    map = p == MAP_FAILED ? nullptr : static_cast<char *>(p);
}

const char *Export::resident(uint64_t offset, size_t len) const {
    if (map == nullptr || len == 0) return nullptr;
    // mincore does not know where the file ends now: a file that shrank since
    // it was exported must go the file I/O way, which reports the short read.
    struct stat st;
    if (fstat(fd, &st) != 0 || base + offset + len > static_cast<uint64_t>(st.st_size))
        return nullptr;
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t first = (map_skew + static_cast<size_t>(offset)) / page * page;
    const size_t end = map_skew + static_cast<size_t>(offset) + len;
    const size_t pages = (end - first + page - 1) / page;
    std::vector<unsigned char> in_core(pages);
    // Pages past the end of a file that shrank are reported absent (or the
    // call fails): the read then takes the file I/O path, which says so.
    if (mincore(map + first, end - first, in_core.data()) != 0) return nullptr;
    for (unsigned char c : in_core)
        if ((c & 1) == 0) return nullptr;
    return map + map_skew + offset;
}

int ExportTable::add(const char *path, uint64_t offset, uint64_t length, bool writable,
                     uint64_t *handle) {
    auto e = std::make_shared<Export>();
    e->writable = writable;
    e->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (e->fd < 0) return RIO_ERR_IO;
    struct stat st;
    if (fstat(e->fd, &st) != 0 || !S_ISREG(st.st_mode)) return RIO_ERR_IO;
    auto file_size = static_cast<uint64_t>(st.st_size);
    if (length == RIO_EXPORT_TO_END) {
        if (offset > file_size) return RIO_ERR_RANGE;
        length = file_size - offset;
    }
    if (offset + length < offset) return RIO_ERR_RANGE;
    e->base = offset;
    e->length = length;
    e->map_range();
    std::lock_guard<std::mutex> lk(mu_);
    uint64_t h = 0;
    do {
        if (!random64(&h)) return MSG_ERR_NOT_SUPPORTED;
    } while (h == 0 || exports_.count(h) != 0);
    exports_.emplace(h, std::move(e));
    *handle = h;
    return MSG_OK;
}

int ExportTable::withdraw(uint64_t handle) {
    std::lock_guard<std::mutex> lk(mu_);
    return exports_.erase(handle) == 1 ? RIO_OK : RIO_ERR_BAD_HANDLE;
}

std::shared_ptr<Export> ExportTable::find(uint64_t handle) const {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = exports_.find(handle);
    return it != exports_.end() ? it->second : nullptr;
}

}  // namespace remoteio
