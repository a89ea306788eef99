// The message trace (VIADUCT_TRACE): one record per completed send or
// receive, kept in memory up to a cap and written at msg_finalize as one CSV
// file per rank. Its format is documented in message_trace.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace msg {

struct Request;

class MessageTrace {
  public:
    // path: the file name, "%r" standing for the rank (else ".RANK" is
    // appended); max_records: the records kept, later ones only counted.
    MessageTrace(const std::string &path, size_t max_records, int rank, int size);
    // CLOCK_MONOTONIC, ns: the time stamps of every record.
    static uint64_t now();
    // Request r of this rank has completed (called under the engine's lock,
    // but safe from any thread).
    void record(const Request &r, int status, size_t bytes);
    // Writes the file (to a temporary name, then renamed); false on an I/O
    // error, which leaves no file behind.
    bool finish();
    const std::string &path() const { return path_; }

    static constexpr int kEager = -1;
    static constexpr int kSelf = -2;

  private:
    struct Record {
        uint64_t post_ns, done_ns, bytes;
        int32_t peer, tag, status;
        int8_t protocol;
        bool is_send;
    };
    // The trace file's whole text (mu_ held); throws std::bad_alloc when it does not fit.
    std::string text_locked() const;
    std::mutex mu_;
    std::vector<Record> records_;  // guarded by mu_
    uint64_t dropped_ = 0;         // guarded by mu_
    bool finished_ = false;        // guarded by mu_
    std::string path_;
    size_t max_records_;
    int rank_, size_;
    uint64_t mono0_ns_, wall0_ns_;
};

}  // namespace msg
