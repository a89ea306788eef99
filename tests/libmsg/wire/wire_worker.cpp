// Multi-process worker for the wire checks: `libmsg_wire_worker flood COUNT` on 3 ranks. Each
// rank in turn floods the others with stamped messages that mostly arrive before any receive is
// posted; they must all arrive intact and in order, with no packet refused as another rank's.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "../worker/harness.hpp"
#include "../worker/pattern.hpp"

namespace {

using namespace worker;

constexpr int kTag = 3;

size_t message_size(int source, uint64_t seq, const msg_info_t &info) {
    return mixed_size(payload_key(source, kTag, seq), info.eager_max, info.buffer_size);
}

// `sender` posts every message to every other rank at once, then joins the barrier; the others
// post their receives only after the barrier, so what has arrived by then waits unexpected and
// the sender is held back past the bound until those receives come.
void flood_round(Job &job, int sender, size_t count) {
    Cq cq(job.ctx());
    std::vector<Buffer> bufs;
    if (job.rank == sender) {
        bufs.reserve(count * static_cast<size_t>(job.size - 1));
        for (int dest = 0; dest < job.size; ++dest) {
            if (dest == sender) continue;
            for (uint64_t seq = 0; seq < count; ++seq) {
                const size_t size = message_size(sender, seq, job.info);
                bufs.emplace_back(size);
                make_message(bufs.back().get(), size, sender, kTag, seq);
                WSTATUS(
                    msg_isend(job.ctx(), dest, kTag, bufs.back().get(), size, cq.get(), nullptr),
                    MSG_OK);
            }
        }
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        for (size_t n = 0; n < bufs.size(); ++n) {
            msg_completion_t c = wait_completion(cq.get(), "flood send");
            WCHECK(c.status == MSG_OK, "flood send: %s", describe(c).c_str());
        }
    } else {
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        const size_t capacity = 4 * job.info.buffer_size + kStampBytes;
        for (uint64_t seq = 0; seq < count; ++seq) bufs.emplace_back(capacity);
        for (uint64_t seq = 0; seq < count; ++seq)
            WSTATUS(msg_irecv(job.ctx(), sender, kTag, bufs[seq].get(), capacity, cq.get(),
                              reinterpret_cast<void *>(seq)),
                    MSG_OK);
        for (size_t n = 0; n < count; ++n) {
            msg_completion_t c = wait_completion(cq.get(), "flood receive");
            const auto seq = reinterpret_cast<uintptr_t>(c.cookie);
            WCHECK(c.status == MSG_OK && c.source == sender && c.tag == kTag,
                   "flood receive #%zu: %s", static_cast<size_t>(seq), describe(c).c_str());
            WCHECK(c.bytes == message_size(sender, seq, job.info),
                   "flood receive #%zu from rank %d: %zu bytes", static_cast<size_t>(seq), sender,
                   c.bytes);
            std::string wrong = check_message(bufs[seq].get(), c.bytes, sender, kTag, seq);
            WCHECK(wrong.empty(), "flood receive #%zu from rank %d: %s", static_cast<size_t>(seq),
                   sender, wrong.c_str());
        }
    }
    cq.destroy();
}

void run_flood(const Args &args) {
    const size_t count = scaled(parse_size_arg(args, 0, 200), 40);
    Job job;
    WCHECK(job.size == 3, "the flood scenario needs 3 ranks, got %d", job.size);
    check_info_matches_environment(job.info);
    for (int sender = 0; sender < job.size; ++sender) flood_round(job, sender, count);
    msg_stats_t stats{};
    WSTATUS(msg_get_stats(job.ctx(), &stats), MSG_OK);
    // Every packet's header named the rank the fabric saw it come from.
    WCHECK(stats.bad_headers == 0, "%llu packets refused",
           static_cast<unsigned long long>(stats.bad_headers));
    WCHECK(stats.messages_received == 2 * count, "%llu messages received, %zu sent to us",
           static_cast<unsigned long long>(stats.messages_received), 2 * count);
    say("flood: %zu messages from each rank to each other rank, intact and in order", count);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2 || std::strcmp(argv[1], "flood") != 0) {
        std::fprintf(stderr, "usage: libmsg_wire_worker flood [COUNT]   (3 ranks)\n");
        return 2;
    }
    say("pid %d", static_cast<int>(getpid()));
    run_flood(Args(argv + 2, argv + argc));
    say("PASS flood");
    return 0;
}
