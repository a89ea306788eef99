// The job key: generation, hex form, where ranks find it, and the HMACs of the
// coordinator's challenge-response.
#include "bootstrap/job_key.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace msg::boot {

namespace {

void ensure_sodium() {
    // Thread safe and idempotent; it fails only without a usable random source.
    static const bool ok = sodium_init() >= 0;
    if (!ok) std::abort();
}

Mac mac_with_label(const char *label, const JobKey &key, const Nonce &challenge,
                   const Nonce &rank_nonce, uint32_t rank, uint32_t size) {
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key.data(), key.size());
    crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char *>(label),
                                  std::strlen(label) + 1);
    crypto_auth_hmacsha256_update(&st, challenge.data(), challenge.size());
    crypto_auth_hmacsha256_update(&st, rank_nonce.data(), rank_nonce.size());
    unsigned char tail[8];
    for (int i = 0; i < 4; ++i) {
        tail[i] = static_cast<unsigned char>(rank >> (8 * i));
        tail[4 + i] = static_cast<unsigned char>(size >> (8 * i));
    }
    crypto_auth_hmacsha256_update(&st, tail, sizeof tail);
    Mac m;
    crypto_auth_hmacsha256_final(&st, m.data());
    sodium_memzero(&st, sizeof st);
    return m;
}

}  // namespace

JobKey make_job_key() {
    ensure_sodium();
    JobKey k;
    randombytes_buf(k.data(), k.size());
    return k;
}

Nonce make_nonce() {
    ensure_sodium();
    Nonce n;
    randombytes_buf(n.data(), n.size());
    return n;
}

std::string key_to_hex(const JobKey &key) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (uint8_t b : key) {
        s.push_back(digits[b >> 4]);
        s.push_back(digits[b & 15]);
    }
    return s;
}

bool key_from_hex(std::string_view text, JobKey *out) {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    if (text.size() != 2 * kJobKeyBytes) return false;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    JobKey k;
    for (size_t i = 0; i < kJobKeyBytes; ++i) {
        int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        k[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    *out = k;
    return true;
}

bool job_key_given() {
    const char *k = std::getenv("VIADUCT_JOB_KEY");
    const char *f = std::getenv("VIADUCT_JOB_KEY_FILE");
    return (k != nullptr && *k != '\0') || (f != nullptr && *f != '\0');
}

bool load_job_key(JobKey *out, std::string *error) {
    const char *k = std::getenv("VIADUCT_JOB_KEY");
    if (k != nullptr && *k != '\0') {
        if (key_from_hex(k, out)) return true;
        *error = "VIADUCT_JOB_KEY is not a job key (64 hex digits)";
        return false;
    }
    const char *f = std::getenv("VIADUCT_JOB_KEY_FILE");
    if (f == nullptr || *f == '\0') {
        *error =
            "job key missing: set VIADUCT_JOB_KEY (64 hex digits) or VIADUCT_JOB_KEY_FILE "
            "(msgrun gives it to the ranks it starts; `msgrun --serve` prints it or writes it "
            "with --key-file)";
        return false;
    }
    int fd = ::open(f, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *error = std::string("VIADUCT_JOB_KEY_FILE=") + f + ": " + std::strerror(errno);
        return false;
    }
    char buf[256];
    ssize_t n;
    do {
        n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n < 0 || !key_from_hex(std::string_view(buf, static_cast<size_t>(n)), out)) {
        *error =
            std::string("VIADUCT_JOB_KEY_FILE=") + f + " does not hold a job key (64 hex digits)";
        return false;
    }
    return true;
}

bool write_key_file(const std::string &path, const JobKey &key, std::string *error) {
    // Written under a temporary name and linked into place: a reader never
    // sees a partial key, and link() refuses a path that exists.
    const std::string tmp = path + ".tmp-" + std::to_string(getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = "cannot create " + tmp + ": " + std::strerror(errno);
        return false;
    }
    const std::string text = key_to_hex(key) + "\n";
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    int saved = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        ::unlink(tmp.c_str());
        *error = "cannot write " + tmp + ": " + std::strerror(saved);
        return false;
    }
    if (::link(tmp.c_str(), path.c_str()) != 0) {
        saved = errno;
        ::unlink(tmp.c_str());
        *error = saved == EEXIST ? path + " exists; refusing to overwrite it with a job key"
                                 : "cannot create " + path + ": " + std::strerror(saved);
        return false;
    }
    ::unlink(tmp.c_str());
    return true;
}

Mac hello_mac(const JobKey &key, const Nonce &challenge, const Nonce &rank_nonce, uint32_t rank,
              uint32_t size) {
    return mac_with_label("viaduct job hello v1", key, challenge, rank_nonce, rank, size);
}

Mac welcome_mac(const JobKey &key, const Nonce &challenge, const Nonce &rank_nonce, uint32_t rank,
                uint32_t size) {
    return mac_with_label("viaduct job welcome v1", key, challenge, rank_nonce, rank, size);
}

bool mac_equal(const Mac &a, const Mac &b) {
    return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace msg::boot
