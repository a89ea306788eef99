// Helpers for libremoteio's in-process tests: a job of one (rank 0 of 1, no
// launcher) running rio, whose worker CQ is the test thread's; bounded waits
// on a CQ; a scratch file of known bytes; patterns to check data against.
#pragma once

#include <fcntl.h>
#include <msg/msg.h>
#include <rio/rio.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "viaduct/env.hpp"

namespace riounit {

// VIADUCT_TEST_SLOWDOWN: time limits stretch under the sanitizers.
inline int slowdown() {
    return static_cast<int>(viaduct::env::positive("VIADUCT_TEST_SLOWDOWN", 1));
}

// How long a completion that must come may take before the test fails.
inline int completion_timeout_ms() {
    return 20000 * slowdown();
}

class LocalRio {
  public:
    // worker: whether IPC for the worker is posted to cq() (else refused).
    explicit LocalRio(const rio_options_t *options = nullptr, bool worker = true) {
        REQUIRE(msg_init(nullptr, &ctx_) == MSG_OK);
        REQUIRE(msg_cq_create(ctx_, &cq_) == MSG_OK);
        REQUIRE(rio_init(ctx_, worker ? cq_ : nullptr, options, &rio_) == MSG_OK);
        REQUIRE(rio_ != nullptr);
    }
    ~LocalRio() {
        rio_destroy(rio_);
        if (cq_ != nullptr) msg_cq_destroy(cq_);
        if (ctx_ != nullptr) msg_destroy(ctx_);
    }
    LocalRio(const LocalRio &) = delete;
    LocalRio &operator=(const LocalRio &) = delete;

    msg_context_t *ctx() const { return ctx_; }
    rio_t *rio() const { return rio_; }
    msg_cq_t *cq() const { return cq_; }
    rio_stats_t stats() const {
        rio_stats_t s{};
        REQUIRE(rio_get_stats(rio_, &s) == MSG_OK);
        return s;
    }

  private:
    msg_context_t *ctx_ = nullptr;
    msg_cq_t *cq_ = nullptr;
    rio_t *rio_ = nullptr;
};

// The next completion on cq; fails the test if none comes in time.
inline msg_completion_t next_completion(msg_cq_t *cq) {
    msg_completion_t c{};
    REQUIRE(msg_cq_wait(cq, completion_timeout_ms(), &c) == MSG_OK);
    return c;
}

// Whether cq holds nothing now.
inline bool cq_empty(msg_cq_t *cq) {
    msg_completion_t c{};
    return msg_cq_wait(cq, 0, &c) == MSG_ERR_TIMEOUT;
}

inline uint8_t pattern_byte(uint64_t seed, uint64_t i) {
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;
    return static_cast<uint8_t>(x >> 56);
}

inline std::vector<uint8_t> pattern(size_t len, uint64_t seed, uint64_t start = 0) {
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; ++i) v[i] = pattern_byte(seed, start + i);
    return v;
}

// A file under $TMPDIR (or /tmp) holding `len` pattern bytes, removed with the object.
class ScratchFile {
  public:
    ScratchFile(size_t len, uint64_t seed) {
        path_ = viaduct::env::text("TMPDIR", "/tmp") + "/rio-unit-XXXXXX";
        int fd = mkstemp(path_.data());
        REQUIRE(fd >= 0);
        std::vector<uint8_t> bytes = pattern(len, seed);
        REQUIRE(write(fd, bytes.data(), len) == static_cast<ssize_t>(len));
        // Out of the page cache where the file system allows, so that a first
        // read goes through the server's file I/O and a later one, finding the
        // pages resident, is sent from its mapping.
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    ~ScratchFile() { unlink(path_.c_str()); }
    ScratchFile(const ScratchFile &) = delete;
    ScratchFile &operator=(const ScratchFile &) = delete;

    const char *path() const { return path_.c_str(); }
    // What the file holds now, read past libremoteio.
    std::vector<uint8_t> read_back(uint64_t offset, size_t len) const {
        std::vector<uint8_t> v(len);
        int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        ssize_t n = pread(fd, v.data(), len, static_cast<off_t>(offset));
        close(fd);
        REQUIRE(n == static_cast<ssize_t>(len));
        return v;
    }
    void truncate(size_t len) const { REQUIRE(::truncate(path_.c_str(), len) == 0); }

  private:
    std::string path_;
};

}  // namespace riounit
