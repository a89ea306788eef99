// The DataPump's source: tells the sink what comes, reads the input with
// `depth` requests in flight and puts each block into the river in file order
// as it arrives (or, with --no-disk, puts one block from memory again and
// again), ends the flow and sends its figures.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "pump_files.hpp"
#include "pump_io.hpp"
#include "viaduct/clock.hpp"

namespace pump {

namespace {

struct AlignedFree {
    void operator()(uint8_t *p) const { std::free(p); }
};
using Aligned = std::unique_ptr<uint8_t, AlignedFree>;

Aligned aligned(size_t bytes) {
    return Aligned(static_cast<uint8_t *>(std::aligned_alloc(
        kDirectAlign, (bytes + kDirectAlign - 1) / kDirectAlign * kDirectAlign)));
}

int source_failed(river_t *r, int rc) {
    return pump::river_failed(r, rc, "the river failed");
}

struct Reader {
    const Options &o;
    river_t *r;
    int fd;
    bool direct;
    uint64_t size;
    std::unique_ptr<DiskIo> io;
    uint64_t next = 0;  // file offset of the next read to post
};

void post(Reader &rd, IoRequest &q) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(rd.o.block, rd.size - rd.next));
    q.fd = rd.fd;
    q.offset = rd.next;
    // O_DIRECT reads whole blocks; the last one comes back short at the end of the file.
    q.len = rd.direct ? (want + kDirectAlign - 1) / kDirectAlign * kDirectAlign : want;
    q.user = reinterpret_cast<void *>(want);
    q.write = false;
    rd.next += want;
    rd.io->submit(&q);
}

// Reads every block with up to depth in flight; puts them in order.
int pump_file(Reader &rd) {
    const size_t depth = static_cast<size_t>(rd.o.depth);
    Aligned memory =
        aligned(depth * ((rd.o.block + kDirectAlign - 1) / kDirectAlign * kDirectAlign));
    if (!memory) return fail("cannot allocate the read buffers");
    std::vector<IoRequest> reqs(depth);
    for (size_t i = 0; i < depth; ++i)
        reqs[i].buf =
            memory.get() + i * ((rd.o.block + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
    size_t posted = 0, taken = 0;
    for (; posted < depth && rd.next < rd.size; ++posted) post(rd, reqs[posted]);
    while (taken < posted) {
        IoRequest &q = reqs[taken % depth];
        while (!q.finished) rd.io->wait();
        const auto want = reinterpret_cast<size_t>(q.user);
        if (q.error != 0)
            return fail("reading " + rd.o.input + " at offset " + std::to_string(q.offset) + ": " +
                        std::strerror(q.error));
        if (q.done < want)
            return fail(rd.o.input + " ended at " + std::to_string(q.offset + q.done) +
                        " bytes, not " + std::to_string(rd.size) + ": it changed during the copy");
        const int rc = river_put_to(rd.r, 0, q.buf, want);
        if (rc != RIVER_OK) return source_failed(rd.r, rc);
        ++taken;
        if (rd.next < rd.size) {
            post(rd, q);
            ++posted;
        }
    }
    return 0;
}

int pump_memory(const Options &o, river_t *r) {
    std::vector<uint8_t> block(o.block);
    for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<uint8_t>(i * 131 + 7);
    for (uint64_t sent = 0; sent < o.bytes;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(o.block, o.bytes - sent));
        const int rc = river_put_to(r, 0, block.data(), n);
        if (rc != RIVER_OK) return source_failed(r, rc);
        sent += n;
    }
    return 0;
}

// Tells the sink what comes; returns its verdict (0: go on).
int greet(msg_context_t *ctx, const Options &o, Meta &m) {
    std::snprintf(m.boot_id, sizeof m.boot_id, "%s", boot_id().c_str());
    int rc = msg_send(ctx, o.to, kTagHello, &m, sizeof m);
    if (rc != MSG_OK) return fail(std::string("telling the sink: ") + msg_strerror(rc));
    if (m.status != 0) return fail(m.message);
    Verdict v{};
    msg_completion_t c{};
    rc = msg_recv(ctx, o.to, kTagVerdict, &v, sizeof v, &c);
    if (rc != MSG_OK || c.bytes != sizeof v)
        return fail(std::string("hearing from the sink: ") + msg_strerror(rc));
    v.message[sizeof v.message - 1] = '\0';
    if (v.status != 0) return fail("rank " + std::to_string(o.to) + " refused: " + v.message);
    return 0;
}

}  // namespace

int run_source(msg_context_t *ctx, const Options &o, Figures *mine) {
    Meta m{};
    m.magic = kMetaMagic;
    int fd = -1;
    bool direct = false;
    std::string why;
    if (o.no_disk) {
        m.size = o.bytes;
    } else if (!open_input(o.input, o.direct, &fd, &direct, &m, &why)) {
        m.status = 1;
        std::snprintf(m.message, sizeof m.message, "%s", why.c_str());
    }
    std::unique_ptr<DiskIo> io;
    if (m.status == 0 && !o.no_disk &&
        !(io = DiskIo::create(o.io, static_cast<unsigned>(o.depth), &why))) {
        m.status = 1;
        std::snprintf(m.message, sizeof m.message, "%s", why.c_str());
    }
    int status = greet(ctx, o, m);
    const int from[] = {o.from}, to[] = {o.to};
    const river_options_t ro = river_options(o, from, to);
    river_t *r = nullptr;
    int rc = status == 0 ? river_open(ctx, &ro, &r) : RIVER_OK;
    if (rc != RIVER_OK) status = source_failed(nullptr, rc);
    const double t0 = viaduct::now_seconds(), c0 = cpu_seconds();
    if (status == 0) {
        Reader rd{o, r, fd, direct, m.size, std::move(io)};
        status = o.no_disk ? pump_memory(o, r) : pump_file(rd);
        mine->io[0] = '\0';
        std::snprintf(mine->io, sizeof mine->io, "%s", o.no_disk ? "none" : rd.io->name());
    }
    if (status == 0 && (rc = river_end(r)) != RIVER_OK) status = source_failed(r, rc);
    if (r != nullptr) {
        river_get_stats(r, &mine->river);
        rc = river_close(r);
        if (status == 0 && rc != RIVER_OK) status = source_failed(nullptr, rc);
    }
    if (fd >= 0) close(fd);
    mine->seconds = viaduct::now_seconds() - t0;
    mine->cpu_seconds = cpu_seconds() - c0;
    mine->bytes = mine->river.bytes_put;
    mine->direct = direct;
    if (status == 0) {
        rc = msg_send(ctx, o.to, kTagFigures, mine, sizeof *mine);
        if (rc != MSG_OK) status = fail(std::string("sending the figures: ") + msg_strerror(rc));
    }
    return status;
}

}  // namespace pump
