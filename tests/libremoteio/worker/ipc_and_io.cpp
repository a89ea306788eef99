// Scenario "ipc_and_io" (3 ranks): ranks 1 and 2 each send rank 0's worker an
// IPC request, then read rank 0's exported file and write into its
// read-write export. Rank 0's worker does not look at its CQ until the
// shadow thread has served every one of those reads and writes: remote I/O
// must not need the worker. Only then are the IPC requests answered.
#include <chrono>
#include <cstring>
#include <thread>

#include "scenarios.hpp"

namespace riotest {

namespace {

constexpr uint32_t kHello = 9;
constexpr size_t kIpcBlock = 128 * 1024;
constexpr uint64_t kFileSeed = 4242;

// Rank 0: waits, away from the CQ, until the shadow thread has served every read and write,
// then answers the two IPC requests and checks what the writers wrote.
void serve_without_worker(Node &node, size_t reads, const ScratchFile &target) {
    // Wait, away from the CQ, for the shadow thread to serve all the I/O.
    // Per reader: the reads, the read-back of its write, and one last read.
    const uint64_t want_read = 2 * (reads * kIpcBlock + 2 * kIpcBlock);
    const uint64_t want_written = 2 * kIpcBlock;
    worker::Watchdog dog(60.0 * worker::slowdown(), "serving remote I/O without the worker");
    rio_stats_t s{};
    for (;;) {
        RSTATUS(rio_get_stats(node.rio(), &s), RIO_OK);
        if (s.bytes_read >= want_read && s.bytes_written >= want_written) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    WCHECK(s.bytes_read == want_read && s.bytes_written == want_written,
           "served %llu B read, %llu B written; expected %llu and %llu",
           static_cast<unsigned long long>(s.bytes_read),
           static_cast<unsigned long long>(s.bytes_written),
           static_cast<unsigned long long>(want_read),
           static_cast<unsigned long long>(want_written));
    int answered = 0;
    pump(
        node,
        [&](rio_incoming_t *in) {
            rio_request_info_t info;
            RSTATUS(rio_incoming_info(in, &info), RIO_OK);
            WCHECK(info.command == kHello && info.len == sizeof(int), "unexpected IPC %u of %zu B",
                   info.command, info.len);
            int from;
            std::memcpy(&from, info.data, sizeof from);
            WCHECK(from == info.source, "IPC says it is from %d, came from %d", from, info.source);
            int answer = from * 100;
            RSTATUS(rio_reply(node.rio(), in, RIO_OK, &answer, sizeof answer), RIO_OK);
            ++answered;
        },
        [&](const msg_completion_t &c) {
            worker::fail_at(__FILE__, __LINE__, "pump", "unexpected completion %s",
                            worker::describe(c).c_str());
        },
        [&] { return answered == 2; });
    // The written region must hold exactly what the writers sent.
    std::vector<uint8_t> got = target.contents();
    WCHECK(got.size() == 2 * kIpcBlock, "read-write export is %zu B", got.size());
    for (int w = 1; w <= 2; ++w) {
        size_t bad = check_pattern(got.data() + (w - 1) * kIpcBlock, kIpcBlock, 1000 + w);
        WCHECK(bad == kIpcBlock, "block written by rank %d differs at %zu", w, bad);
    }
}

// Ranks 1 and 2: send rank 0's worker an IPC request, read rank 0's file and write into its
// read-write export; the IPC reply must come only after all of that.
void use_remote_files(Node &node, size_t reads, uint64_t ro, uint64_t rw) {
    const int me = node.rank();
    int answer = -1;
    RSTATUS(rio_request(node.rio(), 0, RIO_TARGET_WORKER, kHello, &me, sizeof me, &answer,
                        sizeof answer, node.cq(), &answer),
            RIO_OK);
    // Reads, 8 outstanding, of blocks all over the file; then a write and a read back.
    std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(kIpcBlock));
    std::vector<uint64_t> where(8);
    size_t issued = 0, done = 0;
    bool ipc_done = false;
    auto issue_read = [&](size_t slot) {
        where[slot] = ((issued * 7 + static_cast<size_t>(me)) % 64) * kIpcBlock;
        RSTATUS(rio_read(node.rio(), 0, ro, where[slot], bufs[slot].data(), kIpcBlock, node.cq(),
                         &bufs[slot]),
                RIO_OK);
        ++issued;
    };
    for (size_t s = 0; s < 8 && issued < reads; ++s) issue_read(s);
    while (done < reads) {
        msg_completion_t c = worker::wait_completion(node.cq(), "a remote read");
        if (c.cookie == &answer) {
            ipc_done = true;
            continue;
        }
        auto slot = static_cast<size_t>(static_cast<std::vector<uint8_t> *>(c.cookie) - &bufs[0]);
        WCHECK(slot < 8, "completion with a foreign cookie: %s", worker::describe(c).c_str());
        RSTATUS(c.status, RIO_OK);
        WCHECK(c.bytes == kIpcBlock, "read returned %zu B", c.bytes);
        size_t bad = check_pattern(bufs[slot].data(), kIpcBlock, kFileSeed, where[slot]);
        WCHECK(bad == kIpcBlock, "read at %llu differs at byte %zu",
               static_cast<unsigned long long>(where[slot]), bad);
        ++done;
        if (issued < reads) issue_read(slot);
    }
    std::vector<uint8_t> block(kIpcBlock), back(kIpcBlock);
    fill_pattern(block.data(), kIpcBlock, 1000 + static_cast<uint64_t>(me));
    RSTATUS(rio_write_sync(node.rio(), 0, rw, (me - 1) * kIpcBlock, block.data(), kIpcBlock),
            RIO_OK);
    size_t moved = 0;
    RSTATUS(rio_read_sync(node.rio(), 0, rw, (me - 1) * kIpcBlock, back.data(), kIpcBlock, &moved),
            RIO_OK);
    WCHECK(moved == kIpcBlock && back == block, "read back %zu B, equal: %d", moved, back == block);
    // One more read of the read-only file completes rank 0's byte count.
    RSTATUS(rio_read_sync(node.rio(), 0, ro, 0, back.data(), kIpcBlock, &moved), RIO_OK);
    WCHECK(!ipc_done, "the IPC request was answered before the worker looked at its CQ");
    msg_completion_t c = worker::wait_completion(node.cq(), "the IPC reply");
    WCHECK(c.cookie == &answer && c.status == RIO_OK && c.bytes == sizeof answer, "IPC reply: %s",
           worker::describe(c).c_str());
    WCHECK(answer == me * 100, "IPC answer %d", answer);
}

}  // namespace

void run_ipc_and_io(const Args &args) {
    Node node;
    WCHECK(node.size() == 3, "ipc_and_io needs 3 ranks, not %d", node.size());
    const int me = node.rank();
    const size_t reads = worker::scaled(worker::parse_size_arg(args, 0, 64), 8);
    const size_t file_len = 64 * kIpcBlock;
    std::unique_ptr<ScratchFile> file, target;
    uint64_t ro = 0, rw = 0;
    if (me == 0) {
        file = std::make_unique<ScratchFile>("ro", file_len, kFileSeed);
        target = std::make_unique<ScratchFile>("rw", 2 * kIpcBlock, 0);
        RSTATUS(rio_export(node.rio(), file->path().c_str(), 0, RIO_EXPORT_TO_END,
                           RIO_EXPORT_READ_ONLY, &ro),
                RIO_OK);
        RSTATUS(rio_export(node.rio(), target->path().c_str(), 0, RIO_EXPORT_TO_END,
                           RIO_EXPORT_READ_WRITE, &rw),
                RIO_OK);
    }
    ro = exchange_handles(node, ro)[0];
    rw = exchange_handles(node, rw)[0];

    if (me == 0)
        serve_without_worker(node, reads, *target);
    else
        use_remote_files(node, reads, ro, rw);
    node.finalize();
}

}  // namespace riotest
