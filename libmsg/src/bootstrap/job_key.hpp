// The job's secret key and the challenge-response on it that admits a rank to
// the coordinator (and proves the coordinator to the rank); the key itself
// never crosses the wire.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace msg::boot {

constexpr size_t kJobKeyBytes = 32;
using JobKey = std::array<uint8_t, kJobKeyBytes>;
using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

// Fresh random bytes from the system's generator (libsodium).
JobKey make_job_key();
Nonce make_nonce();

// 64 lower-case hex digits, as VIADUCT_JOB_KEY and key files hold it.
std::string key_to_hex(const JobKey &key);
// Parses 64 hex digits, allowing surrounding white space; false if malformed.
bool key_from_hex(std::string_view text, JobKey *out);

// The key from VIADUCT_JOB_KEY, else from the file VIADUCT_JOB_KEY_FILE names.
// False with *error naming what is missing or wrong.
bool load_job_key(JobKey *out, std::string *error);
// True if either variable is set (even to something malformed).
bool job_key_given();
// Writes the key to a new file, mode 0600, that appears whole or not at all;
// refuses a path that exists.
bool write_key_file(const std::string &path, const JobKey &key, std::string *error);

// The rank's proof, sent in its Hello: HMAC-SHA256 under the key over a label,
// the coordinator's challenge, the rank's own nonce, its rank and job size.
Mac hello_mac(const JobKey &key, const Nonce &challenge, const Nonce &rank_nonce, uint32_t rank,
              uint32_t size);
// The coordinator's answer, under another label: a rank trusts nothing from a
// coordinator that cannot produce it.
Mac welcome_mac(const JobKey &key, const Nonce &challenge, const Nonce &rank_nonce, uint32_t rank,
                uint32_t size);
// Constant-time comparison.
bool mac_equal(const Mac &a, const Mac &b);

}  // namespace msg::boot
