// Scenario "violations" (2 ranks): rank 1 tries everything a server must
// refuse — reads and writes outside an export's range, an unknown and a
// withdrawn handle, a write to a read-only export, a read of a file shorter
// than its export, transfers over the server's limit, an unknown command,
// and malformed request headers sent raw over libmsg — and checks each
// answer; then a good read still works and rank 0's counters tell the story.
#include <cstring>

#include "msg_internal/one_shot.hpp"
#include "scenarios.hpp"

namespace riotest {

namespace {

constexpr uint32_t kStats = 5;  // shadow handler: replies with rio_stats_t
constexpr uint64_t kViolationsSeed = 31337;
constexpr size_t kFile = 1 << 20;
constexpr size_t kLimit = 1 << 20;  // rank 0's max_transfer

void stats_handler(rio_t *rio, rio_incoming_t *in, void *) {
    rio_stats_t s;
    RSTATUS(rio_get_stats(rio, &s), RIO_OK);
    RSTATUS(rio_reply(rio, in, RIO_OK, &s, sizeof s), RIO_OK);
}

struct Handles {
    uint64_t ro, rw, shrunk, withdrawn, big;
};

void local_errors(Node &node, uint64_t ro) {
    uint8_t b[16];
    msg_cq_t *cq = node.cq();
    RSTATUS(rio_request(node.rio(), 0, RIO_TARGET_WORKER, RIO_CMD_RESERVED, nullptr, 0, nullptr, 0,
                        cq, nullptr),
            MSG_ERR_INVALID_ARG);
    RSTATUS(rio_request(node.rio(), 2, RIO_TARGET_WORKER, 1, nullptr, 0, nullptr, 0, cq, nullptr),
            MSG_ERR_UNKNOWN_RANK);
    RSTATUS(rio_request(node.rio(), -1, RIO_TARGET_WORKER, 1, nullptr, 0, nullptr, 0, cq, nullptr),
            MSG_ERR_UNKNOWN_RANK);
    RSTATUS(rio_request(node.rio(), 0, 7, 1, nullptr, 0, nullptr, 0, cq, nullptr),
            MSG_ERR_INVALID_ARG);
    RSTATUS(rio_request(node.rio(), 0, RIO_TARGET_WORKER, 1, nullptr, 4, nullptr, 0, cq, nullptr),
            MSG_ERR_INVALID_ARG);
    RSTATUS(rio_read(node.rio(), 0, ro, 0, b, sizeof b, nullptr, nullptr), MSG_ERR_INVALID_ARG);
    RSTATUS(rio_read(nullptr, 0, ro, 0, b, sizeof b, cq, nullptr), MSG_ERR_INVALID_ARG);
    uint64_t h;
    RSTATUS(rio_export(node.rio(), "/nonexistent/viaduct/file", 0, 1, RIO_EXPORT_READ_ONLY, &h),
            RIO_ERR_IO);
    RSTATUS(rio_export(node.rio(), "/", 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &h),
            RIO_ERR_IO);
    RSTATUS(rio_export(node.rio(), "/dev/null", 0, 1, 5, &h), MSG_ERR_INVALID_ARG);
    RSTATUS(rio_withdraw(node.rio(), 0xdeadbeef), RIO_ERR_BAD_HANDLE);
    RSTATUS(rio_set_handler(node.rio(), RIO_CMD_RESERVED + 1, stats_handler, nullptr),
            MSG_ERR_INVALID_ARG);
}

// Raw messages on libremoteio's request tag that no well-behaved peer sends.
int send_malformed(Node &node) {
    std::vector<std::vector<uint8_t>> bad;
    bad.push_back(std::vector<uint8_t>(10, 0xab));  // shorter than a header
    std::vector<uint8_t> hdr(64, 0);
    bad.push_back(hdr);  // zero magic
    const uint32_t magic = 0x52494f51;
    std::memcpy(hdr.data(), &magic, 4);
    const uint16_t version = 1;
    std::memcpy(hdr.data() + 4, &version, 2);
    hdr[7] = 1;  // inline data flag
    const uint32_t tag_base = RIO_TAG_FIRST + 0x100;
    std::memcpy(hdr.data() + 12, &tag_base, 4);
    const uint64_t claimed = 1000;  // claims 1000 inline bytes, carries 3
    std::memcpy(hdr.data() + 16, &claimed, 8);
    std::vector<uint8_t> lying = hdr;
    lying.insert(lying.end(), {1, 2, 3});
    bad.push_back(lying);
    std::vector<uint8_t> bad_version = hdr;
    bad_version[4] = 9;
    bad.push_back(bad_version);
    std::vector<uint8_t> bad_tags = hdr;
    const uint64_t zero = 0;
    std::memcpy(bad_tags.data() + 16, &zero, 8);  // consistent length...
    std::memcpy(bad_tags.data() + 12, &zero, 4);  // ...but a tag block outside libremoteio's
    bad.push_back(bad_tags);
    // libremoteio's own tag: only the reserved-tag path may send on it.
    for (auto &m : bad)
        WSTATUS(viaduct::one_shot(node.ctx(),
                                  [&](msg_cq_t *q) {
                                      return msg_isend_flags(node.ctx(), 0, RIO_TAG_FIRST, m.data(),
                                                             m.size(), q, nullptr,
                                                             MSG_FLAG_RESERVED_TAG);
                                  }),
                MSG_OK);
    return static_cast<int>(bad.size());
}

// Rank 0's files, kept until the end of the scenario.
struct ServerFiles {
    std::unique_ptr<ScratchFile> ro, rw, shorter, big;
};

// Rank 0: a stats handler and five exports, one of a file then cut short and one withdrawn.
void export_files(Node &node, ServerFiles &files, Handles *h) {
    RSTATUS(rio_set_handler(node.rio(), kStats, stats_handler, nullptr), RIO_OK);
    files.ro = std::make_unique<ScratchFile>("ro", kFile, kViolationsSeed);
    files.rw = std::make_unique<ScratchFile>("rw", 8192, 1);
    files.shorter = std::make_unique<ScratchFile>("short", 65536, 2);
    files.big = std::make_unique<ScratchFile>("big", 4 * kLimit, 3);
    // Bytes [4096, 4096 + 65536) of the read-only file only.
    RSTATUS(
        rio_export(node.rio(), files.ro->path().c_str(), 4096, 65536, RIO_EXPORT_READ_ONLY, &h->ro),
        RIO_OK);
    RSTATUS(rio_export(node.rio(), files.rw->path().c_str(), 0, RIO_EXPORT_TO_END,
                       RIO_EXPORT_READ_WRITE, &h->rw),
            RIO_OK);
    RSTATUS(rio_export(node.rio(), files.shorter->path().c_str(), 0, RIO_EXPORT_TO_END,
                       RIO_EXPORT_READ_ONLY, &h->shrunk),
            RIO_OK);
    files.shorter->truncate(32768);  // now shorter than its export
    RSTATUS(rio_export(node.rio(), files.ro->path().c_str(), 0, 10, RIO_EXPORT_READ_ONLY,
                       &h->withdrawn),
            RIO_OK);
    RSTATUS(rio_withdraw(node.rio(), h->withdrawn), RIO_OK);
    RSTATUS(rio_withdraw(node.rio(), h->withdrawn), RIO_ERR_BAD_HANDLE);
    RSTATUS(rio_export(node.rio(), files.big->path().c_str(), 0, RIO_EXPORT_TO_END,
                       RIO_EXPORT_READ_WRITE, &h->big),
            RIO_OK);
    // An export past the end of the file is refused up front.
    uint64_t x;
    RSTATUS(rio_export(node.rio(), files.rw->path().c_str(), 9000, RIO_EXPORT_TO_END,
                       RIO_EXPORT_READ_ONLY, &x),
            RIO_ERR_RANGE);
}

// Rank 1: reads, writes and stats inside and outside each export's range and limits.
void refused_transfers(Node &node, const Handles &h, std::vector<uint8_t> &buf) {
    size_t moved = 99;
    // Inside the range: data from file offset 4096 on.
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 0, buf.data(), 65536, &moved), RIO_OK);
    WCHECK(moved == 65536 && check_pattern(buf.data(), 65536, kViolationsSeed, 4096) == 65536,
           "in-range read: %zu B or wrong data", moved);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 65536, buf.data(), 0, &moved), RIO_OK);
    WCHECK(moved == 0, "empty read at the end moved %zu B", moved);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 65536 - 10, buf.data(), 20, &moved), RIO_ERR_RANGE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 65537, buf.data(), 0, &moved), RIO_ERR_RANGE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, UINT64_MAX - 5, buf.data(), 10, &moved),
            RIO_ERR_RANGE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro + 12345, 0, buf.data(), 10, &moved),
            RIO_ERR_BAD_HANDLE);
    // The same refusals for reads whose data would come on its own (a full, successful
    // direct read has no reply header; a refused one must still say why).
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 1, buf.data(), 65536, &moved), RIO_ERR_RANGE);
    WCHECK(moved == 0, "refused direct read moved %zu B", moved);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro + 12345, 0, buf.data(), 65536, &moved),
            RIO_ERR_BAD_HANDLE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 4096, buf.data(), 65536 - 4096, &moved), RIO_OK);
    WCHECK(moved == 65536 - 4096 &&
               check_pattern(buf.data(), 65536 - 4096, kViolationsSeed, 8192) == 65536 - 4096,
           "direct read at an offset: %zu B or wrong data", moved);
    RSTATUS(rio_read_sync(node.rio(), 0, h.withdrawn, 0, buf.data(), 10, &moved),
            RIO_ERR_BAD_HANDLE);
    RSTATUS(rio_write_sync(node.rio(), 0, h.ro, 0, buf.data(), 10), RIO_ERR_READ_ONLY);
    RSTATUS(rio_write_sync(node.rio(), 0, h.rw, 8000, buf.data(), 500), RIO_ERR_RANGE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.shrunk, 0, buf.data(), 65536, &moved), RIO_ERR_IO);
    RSTATUS(rio_read_sync(node.rio(), 0, h.shrunk, 40000, buf.data(), 100, &moved), RIO_ERR_IO);
    RSTATUS(rio_read_sync(node.rio(), 0, h.shrunk, 0, buf.data(), 100, &moved), RIO_OK);
    // Over the server's max_transfer, read and write (the write's data is drained).
    RSTATUS(rio_read_sync(node.rio(), 0, h.big, 0, buf.data(), 2 * kLimit, &moved),
            RIO_ERR_TOO_LARGE);
    RSTATUS(rio_write_sync(node.rio(), 0, h.big, 0, buf.data(), 2 * kLimit), RIO_ERR_TOO_LARGE);
    RSTATUS(rio_read_sync(node.rio(), 0, h.big, kLimit, buf.data(), kLimit, &moved), RIO_OK);
    WCHECK(check_pattern(buf.data(), kLimit, 3, kLimit) == kLimit, "big read data");
    uint64_t len = 0;
    int flags = -1;
    RSTATUS(rio_stat(node.rio(), 0, h.ro, &len, &flags), RIO_OK);
    WCHECK(len == 65536 && flags == RIO_EXPORT_READ_ONLY, "stat: %llu B flags %d",
           static_cast<unsigned long long>(len), flags);
    RSTATUS(rio_stat(node.rio(), 0, h.rw, &len, &flags), RIO_OK);
    WCHECK(len == 8192 && flags == RIO_EXPORT_READ_WRITE, "stat rw: %llu B flags %d",
           static_cast<unsigned long long>(len), flags);
    RSTATUS(rio_stat(node.rio(), 0, h.withdrawn, &len, &flags), RIO_ERR_BAD_HANDLE);
}

// Rank 1: unknown commands, a cut reply and malformed headers; then a good read still works and
// rank 0's counters match what was sent.
void refused_calls_and_counts(Node &node, const Handles &h, std::vector<uint8_t> &buf) {
    size_t moved = 99;
    // Unknown commands at either target.
    RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, 4242, nullptr, 0, nullptr, 0, nullptr),
            RIO_ERR_NO_HANDLER);
    // A reply bigger than the buffer is cut, and says so.
    rio_stats_t small{};
    size_t got = 0;
    RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, kStats, nullptr, 0, &small, 8, &got),
            MSG_ERR_TRUNCATED);
    WCHECK(got == 8, "truncated reply delivered %zu B", got);

    const int sent_bad = send_malformed(node);
    // Still serving: a good read, then the server's own count.
    RSTATUS(rio_read_sync(node.rio(), 0, h.ro, 100, buf.data(), 1000, &moved), RIO_OK);
    WCHECK(check_pattern(buf.data(), 1000, kViolationsSeed, 4196) == 1000,
           "read after bad headers");
    rio_stats_t s{};
    RSTATUS(rio_call(node.rio(), 0, RIO_TARGET_SHADOW, kStats, nullptr, 0, &s, sizeof s, &got),
            RIO_OK);
    WCHECK(got == sizeof s, "stats reply %zu B", got);
    WCHECK(s.bad_requests == static_cast<uint64_t>(sent_bad),
           "server counted %llu bad requests, %d were sent",
           static_cast<unsigned long long>(s.bad_requests), sent_bad);
    // Refused: 5 out of range, 4 unknown or withdrawn handle, 1 read-only, 2 short file,
    // 2 too large, 1 no handler.
    WCHECK(s.requests_refused == 15, "server refused %llu requests, expected 15",
           static_cast<unsigned long long>(s.requests_refused));
    worker::say("violations: every refusal came back with its status; %d bad headers counted",
                sent_bad);
}

}  // namespace

void run_violations(const Args &) {
    rio_options_t opts;
    rio_options_init(&opts);
    opts.max_transfer = kLimit;
    Node node(&opts);
    WCHECK(node.size() == 2, "violations needs 2 ranks, not %d", node.size());
    const int me = node.rank();
    ServerFiles files;
    Handles h{};
    if (me == 0) export_files(node, files, &h);
    for (uint64_t *f : {&h.ro, &h.rw, &h.shrunk, &h.withdrawn, &h.big})
        *f = exchange_handles(node, *f)[0];

    if (me == 1) {
        local_errors(node, h.ro);
        std::vector<uint8_t> buf(2 * kLimit);
        refused_transfers(node, h, buf);
        refused_calls_and_counts(node, h, buf);
    }
    node.finalize();
}

}  // namespace riotest
