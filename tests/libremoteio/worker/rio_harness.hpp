// What the libremoteio scenarios share on top of libmsg's worker harness: a
// rio_t per rank, status checks that speak rio_strerror, data patterns,
// scratch files, and a worker loop that serves IPC while it waits.
#pragma once

#include <rio/rio.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"

// RSTATUS(call, expected): like WSTATUS, with libremoteio's status names.
#define RSTATUS(call, expected)                                                                \
    do {                                                                                       \
        const int rstatus_rc = (call);                                                         \
        const int rstatus_want = (expected);                                                   \
        if (rstatus_rc != rstatus_want)                                                        \
            ::worker::fail_at(__FILE__, __LINE__, #call, "returned %d (%s), expected %d (%s)", \
                              rstatus_rc, rio_strerror(rstatus_rc), rstatus_want,              \
                              rio_strerror(rstatus_want));                                     \
    } while (0)

namespace riotest {

using worker::Args;

// A rank's libremoteio instance; the worker CQ receives IPC requests.
class Node {
  public:
    explicit Node(const rio_options_t *options = nullptr);
    ~Node();
    Node(const Node &) = delete;
    Node &operator=(const Node &) = delete;

    // rio_finalize must return `expected`; then msg_finalize (after_loss: as
    // worker::Job::finalize_after_loss, for the survivors of a killed rank).
    void finalize(int expected = RIO_OK, bool after_loss = false);
    rio_t *rio() const { return rio_; }
    msg_context_t *ctx() const { return job.ctx(); }
    msg_cq_t *cq() const { return cq_->get(); }
    int rank() const { return job.rank; }
    int size() const { return job.size; }

    worker::Job job;

  private:
    std::unique_ptr<worker::Cq> cq_;
    rio_t *rio_ = nullptr;
};

// Byte i of the stream named by seed.
uint8_t pattern_byte(uint64_t seed, uint64_t i);
void fill_pattern(void *buf, size_t len, uint64_t seed, uint64_t start = 0);
// Index of the first byte that differs from the pattern, or len.
size_t check_pattern(const void *buf, size_t len, uint64_t seed, uint64_t start = 0);
uint64_t fnv1a(const void *buf, size_t len);

// A file under $TMPDIR (or /tmp) removed with the object; holds `len` pattern bytes.
class ScratchFile {
  public:
    ScratchFile(const std::string &tag, size_t len, uint64_t seed);
    ~ScratchFile();
    ScratchFile(const ScratchFile &) = delete;
    ScratchFile &operator=(const ScratchFile &) = delete;
    const std::string &path() const { return path_; }
    void truncate(size_t len);
    std::vector<uint8_t> contents() const;

  private:
    std::string path_;
};

// Waits on the node's CQ, handing RIO_OP_REQUEST entries to `serve` and
// other completions to `done`, until `finished` holds. Fails the scenario if
// nothing arrives for the completion timeout.
void pump(Node &node, const std::function<void(rio_incoming_t *)> &serve,
          const std::function<void(const msg_completion_t &)> &done,
          const std::function<bool()> &finished);

// Every rank sends its handle to every other: result[r] is rank r's handle.
std::vector<uint64_t> exchange_handles(Node &node, uint64_t mine);

}  // namespace riotest
