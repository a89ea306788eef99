// The data portion of a request this process serves. Data that came inline
// with the header is copied to the heap; data still to come gets an anonymous
// mapping, whose pages the kernel supplies only as the data is written into
// them: a request whose data has not arrived holds address space, not memory.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace remoteio {

class RequestData {
  public:
    RequestData() = default;
    ~RequestData() { unmap(); }
    RequestData(const RequestData &) = delete;
    RequestData &operator=(const RequestData &) = delete;

    // Data that arrived with the header.
    void assign(const char *p, size_t n) {
        unmap();
        heap_.assign(p, p + n);
    }
    // Room for n bytes yet to arrive. False if no address space was left.
    bool reserve(size_t n) {
        unmap();
        heap_.clear();
        if (n == 0) return true;
        void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return false;
        map_ = static_cast<char *>(p);
        map_len_ = n;
        return true;
    }

    char *data() { return map_ != nullptr ? map_ : heap_.data(); }
    const char *data() const { return map_ != nullptr ? map_ : heap_.data(); }
    size_t size() const { return map_ != nullptr ? map_len_ : heap_.size(); }

  private:
    void unmap() {
        if (map_ != nullptr) munmap(map_, map_len_);
        map_ = nullptr;
        map_len_ = 0;
    }

    std::vector<char> heap_;
    char *map_ = nullptr;
    size_t map_len_ = 0;
};

}  // namespace remoteio
