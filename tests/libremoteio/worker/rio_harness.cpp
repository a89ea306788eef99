// The libremoteio scenarios' shared pieces (see rio_harness.hpp).
#include "rio_harness.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "viaduct/env.hpp"

namespace riotest {

Node::Node(const rio_options_t *options) {
    cq_ = std::make_unique<worker::Cq>(job.ctx());
    RSTATUS(rio_init(job.ctx(), cq_->get(), options, &rio_), RIO_OK);
    WCHECK(rio_ != nullptr, "rio_init succeeded but returned no handle");
}

Node::~Node() {
    if (rio_ != nullptr) rio_destroy(rio_);
}

void Node::finalize(int expected, bool after_loss) {
    worker::Watchdog dog(60.0 * worker::slowdown(), "rio_finalize");
    RSTATUS(rio_finalize(rio_), expected);
    rio_destroy(rio_);
    rio_ = nullptr;
    cq_->destroy();
    if (after_loss)
        job.finalize_after_loss();
    else
        job.finalize();
}

uint8_t pattern_byte(uint64_t seed, uint64_t i) {
    uint64_t x = (i / 8) * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull + 1;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return static_cast<uint8_t>(x >> ((i % 8) * 8));
}

void fill_pattern(void *buf, size_t len, uint64_t seed, uint64_t start) {
    auto *b = static_cast<uint8_t *>(buf);
    for (size_t i = 0; i < len; ++i) b[i] = pattern_byte(seed, start + i);
}

size_t check_pattern(const void *buf, size_t len, uint64_t seed, uint64_t start) {
    const auto *b = static_cast<const uint8_t *>(buf);
    for (size_t i = 0; i < len; ++i)
        if (b[i] != pattern_byte(seed, start + i)) return i;
    return len;
}

uint64_t fnv1a(const void *buf, size_t len) {
    const auto *b = static_cast<const uint8_t *>(buf);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

ScratchFile::ScratchFile(const std::string &tag, size_t len, uint64_t seed) {
    std::string tmpl = viaduct::env::text("TMPDIR", "/tmp") + "/rio-test-" + tag + "-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    WCHECK(fd >= 0, "cannot create a scratch file from %s", tmpl.c_str());
    path_ = name.data();
    std::vector<uint8_t> block(1 << 20);
    for (size_t done = 0; done < len;) {
        size_t n = len - done < block.size() ? len - done : block.size();
        fill_pattern(block.data(), n, seed, done);
        ssize_t w = write(fd, block.data(), n);
        WCHECK(w == static_cast<ssize_t>(n), "writing scratch file %s", path_.c_str());
        done += n;
    }
    close(fd);
}

ScratchFile::~ScratchFile() {
    if (!path_.empty()) unlink(path_.c_str());
}

void ScratchFile::truncate(size_t len) {
    WCHECK(::truncate(path_.c_str(), static_cast<off_t>(len)) == 0, "truncating %s", path_.c_str());
}

std::vector<uint8_t> ScratchFile::contents() const {
    std::vector<uint8_t> out;
    int fd = open(path_.c_str(), O_RDONLY);
    WCHECK(fd >= 0, "opening %s", path_.c_str());
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        WCHECK(n >= 0, "reading %s", path_.c_str());
        if (n == 0) break;
        out.insert(out.end(), buf, buf + n);
    }
    close(fd);
    return out;
}

void pump(Node &node, const std::function<void(rio_incoming_t *)> &serve,
          const std::function<void(const msg_completion_t &)> &done,
          const std::function<bool()> &finished) {
    while (!finished()) {
        msg_completion_t c = worker::wait_completion(node.cq(), "a request or a reply");
        if (c.op == RIO_OP_REQUEST)
            serve(static_cast<rio_incoming_t *>(c.cookie));
        else
            done(c);
    }
}

std::vector<uint64_t> exchange_handles(Node &node, uint64_t mine) {
    // Over plain libmsg on a tag below RIO_TAG_FIRST, as an application would.
    constexpr int kTag = 77;
    std::vector<uint64_t> all(static_cast<size_t>(node.size()));
    all[static_cast<size_t>(node.rank())] = mine;
    worker::Cq cq(node.ctx());
    for (int r = 0; r < node.size(); ++r) {
        if (r == node.rank()) continue;
        WSTATUS(msg_irecv(node.ctx(), r, kTag, &all[static_cast<size_t>(r)], sizeof(uint64_t),
                          cq.get(), nullptr),
                MSG_OK);
        WSTATUS(msg_isend(node.ctx(), r, kTag, &mine, sizeof mine, cq.get(), nullptr), MSG_OK);
    }
    for (int i = 0; i < 2 * (node.size() - 1); ++i) {
        msg_completion_t c = worker::wait_completion(cq.get(), "a handle exchange");
        WSTATUS(c.status, MSG_OK);
    }
    cq.destroy();
    return all;
}

}  // namespace riotest
