// The bodies of the bootstrap frames: one pure encoder and decoder per frame
// type, so every rank, count and length from the wire is checked in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/job_key.hpp"

namespace msg::boot {

// Each decoder returns nullptr when the body is well formed (and fills *out),
// else a constant string naming what is wrong; it never trusts a field first.

struct Hello {
    uint32_t rank = 0;
    uint32_t size = 0;
    Nonce nonce{};  // the rank's, so the coordinator's answer is fresh too
    Mac mac{};      // hello_mac over the challenge, nonce, rank and size
};
std::vector<uint8_t> encode_hello(const Hello &h);
// Shape only, plus rank < size; the coordinator checks size against its job.
const char *decode_hello(const std::vector<uint8_t> &body, Hello *out);

// Challenge: exactly a nonce. Welcome: exactly a mac.
std::vector<uint8_t> encode_challenge(const Nonce &n);
const char *decode_challenge(const std::vector<uint8_t> &body, Nonce *out);
std::vector<uint8_t> encode_welcome(const Mac &m);
const char *decode_welcome(const std::vector<uint8_t> &body, Mac *out);

// Gather: u32 seq, then the rank's bytes.
std::vector<uint8_t> encode_gather(uint32_t seq, const std::vector<uint8_t> &data);
const char *decode_gather(const std::vector<uint8_t> &body, uint32_t *seq,
                          std::vector<uint8_t> *data);

// Barrier and BarrierDone: exactly a u32 seq.
std::vector<uint8_t> encode_seq(uint32_t seq);
const char *decode_seq(const std::vector<uint8_t> &body, uint32_t *seq);

// GatherResult: u32 seq, u32 n, n x (u8 present, u32 len, len bytes).
struct GatherResult {
    uint32_t seq = 0;
    std::vector<bool> present;
    std::vector<std::vector<uint8_t>> data;
};
std::vector<uint8_t> encode_gather_result(const GatherResult &g);
// n must equal job_size, present 0 or 1, every len within the body, nothing after.
const char *decode_gather_result(const std::vector<uint8_t> &body, int job_size, GatherResult *out);

// Failed: exactly a u32 rank, which must lie in [0, job_size).
std::vector<uint8_t> encode_failed(int rank);
const char *decode_failed(const std::vector<uint8_t> &body, int job_size, int *rank);

// Heartbeat: exactly a u32, the sender's allowed silence in ms, in [100, 24 h].
std::vector<uint8_t> encode_heartbeat(int silence_ms);
const char *decode_heartbeat(const std::vector<uint8_t> &body, int *silence_ms);

// BarrierFailed: u32 seq, then a u32 rank in [0, job_size).
std::vector<uint8_t> encode_barrier_failed(uint32_t seq, int rank);
const char *decode_barrier_failed(const std::vector<uint8_t> &body, int job_size, uint32_t *seq,
                                  int *rank);

// Error: text, shown to a user; at most kMaxErrorText bytes, and anything not
// printable becomes '?', so a peer cannot write control sequences to a terminal.
constexpr size_t kMaxErrorText = 1024;
std::vector<uint8_t> encode_error(const std::string &text);
const char *decode_error(const std::vector<uint8_t> &body, std::string *text);

}  // namespace msg::boot
