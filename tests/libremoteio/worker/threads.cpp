// Scenario "threads": THREADS application threads per rank make CALLS
// blocking requests each — shadow-handler echoes, remote reads, and echoes
// to the worker thread of some rank (their own included) — while the main
// thread serves its worker's requests. Every reply is checked.
#include <atomic>
#include <thread>

#include "echo_service.hpp"
#include "scenarios.hpp"

namespace riotest {

namespace {
constexpr size_t kThreadsBlock = 16 * 1024;
constexpr uint64_t kThreadsSeed = 606;

int worker_dest(int source, int thread, int n) {
    return (source + thread) % n;
}
}  // namespace

void run_threads(const Args &args) {
    Node node;
    const int me = node.rank(), n = node.size();
    const int threads = static_cast<int>(worker::parse_size_arg(args, 0, 8));
    const size_t calls = worker::scaled(worker::parse_size_arg(args, 1, 60), 12);
    const auto cases = echo_cases(node.job.info.eager_max, 0);
    EchoHandler handler{me, cases};
    for (uint32_t cmd = kEchoFirst; cmd < kEchoFirst + cases.size(); ++cmd)
        RSTATUS(rio_set_handler(node.rio(), cmd, echo_handler, &handler), RIO_OK);
    ScratchFile file("threads", 64 * kThreadsBlock, kThreadsSeed + static_cast<uint64_t>(me));
    uint64_t h = 0;
    RSTATUS(
        rio_export(node.rio(), file.path().c_str(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY, &h),
        RIO_OK);
    const auto handles = exchange_handles(node, h);

    // Requests this rank's worker will get: from every rank s, thread t whose worker
    // destination is us, one per call j with j % 3 == 2.
    size_t expect = 0;
    for (int s = 0; s < n; ++s)
        for (int t = 0; t < threads; ++t)
            if (worker_dest(s, t, n) == me) expect += calls / 3;

    std::atomic<size_t> checked{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            std::vector<uint8_t> request, reply;
            for (size_t j = 0; j < calls; ++j) {
                const uint32_t cmd = kEchoFirst + static_cast<uint32_t>((j + t) % 7);
                const EchoCase &k = cases[cmd - kEchoFirst];
                int dest = static_cast<int>((static_cast<size_t>(me) + j) % static_cast<size_t>(n));
                if (j % 3 == 1) {
                    dest = (dest + 1) % n;
                    reply.resize(kThreadsBlock);
                    size_t off = ((j * 13 + static_cast<size_t>(t)) % 64) * kThreadsBlock,
                           moved = 0;
                    RSTATUS(rio_read_sync(node.rio(), dest, handles[static_cast<size_t>(dest)], off,
                                          reply.data(), kThreadsBlock, &moved),
                            RIO_OK);
                    WCHECK(moved == kThreadsBlock &&
                               check_pattern(reply.data(), kThreadsBlock,
                                             kThreadsSeed + static_cast<uint64_t>(dest),
                                             off) == kThreadsBlock,
                           "thread %d read %zu from rank %d: wrong data", t, j, dest);
                } else {
                    const int target = j % 3 == 2 ? RIO_TARGET_WORKER : RIO_TARGET_SHADOW;
                    if (target == RIO_TARGET_WORKER) dest = worker_dest(me, t, n);
                    request.resize(k.request_len);
                    fill_pattern(request.data(), request.size(), request_seed(me, dest, cmd));
                    reply.assign(k.reply_len, 0);
                    size_t got = 0;
                    RSTATUS(rio_call(node.rio(), dest, target, cmd, request.data(), request.size(),
                                     reply.data(), reply.size(), &got),
                            RIO_OK);
                    WCHECK(got == k.reply_len &&
                               check_pattern(reply.data(), got, reply_seed(me, dest, cmd)) == got,
                           "thread %d call %zu to rank %d: wrong reply", t, j, dest);
                }
                ++checked;
            }
        });
    }
    size_t served = 0;
    if (expect > 0)
        pump(
            node, [&](rio_incoming_t *in) { serve_echo(node.rio(), in, me, cases), ++served; },
            [&](const msg_completion_t &c) {
                worker::fail_at(__FILE__, __LINE__, "pump", "unexpected completion %s",
                                worker::describe(c).c_str());
            },
            [&] { return served == expect; });
    for (std::thread &t : pool) t.join();
    WCHECK(checked == calls * static_cast<size_t>(threads), "%zu calls checked", checked.load());
    worker::say("threads: %d threads x %zu calls, %zu worker requests served", threads, calls,
                served);
    node.finalize();
}

}  // namespace riotest
