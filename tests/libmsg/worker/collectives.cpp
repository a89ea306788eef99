// Scenario "collectives": every collective, for every element type and reduction, at sizes 0, 1
// and 1 MiB + 3 (elements for reductions, bytes otherwise), checked against the same
// computation done serially from every rank's input (which each rank can compute); roots at
// both ends and in the middle; the nonblocking forms several at once with point-to-point
// traffic and an MSG_ANY_TAG receive that the collectives must never match.
#include <cinttypes>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "scenarios.hpp"

namespace worker {
// Named: the sanitizer trees compile several scenario files as one (unity builds).
namespace coll_results {
namespace {

constexpr size_t kLarge = (size_t{1} << 20) + 3;
constexpr size_t kMiddle = (size_t{1} << 16) + 5;  // elements: 256 KiB and 512 KiB and a bit
constexpr int kTypes[] = {MSG_INT32, MSG_INT64, MSG_UINT32, MSG_UINT64, MSG_FLOAT, MSG_DOUBLE};
constexpr int kOps[] = {MSG_SUM, MSG_MIN, MSG_MAX, MSG_BAND, MSG_BOR};

// Rank r's byte i of a block meant for rank `to` (gather, scatter, alltoall).
unsigned char byte_of(int r, int to, size_t i) {
    return static_cast<unsigned char>(r * 37 + to * 11 + i * 7 + (i >> 8));
}

// Rank r's element i: small integers, so float sums are exact in any order.
template <typename T>
T value_of(int r, size_t i) {
    const int v = static_cast<int>((static_cast<size_t>(r) * 31 + i * 7) % 61) + 1;
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>)
        return static_cast<T>(i % 3 == 0 ? -v : v);
    return static_cast<T>(v);
}

template <typename T>
T combine(int op, T a, T b) {
    switch (op) {
        case MSG_SUM:
            return static_cast<T>(a + b);
        case MSG_MIN:
            return std::min(a, b);
        case MSG_MAX:
            return std::max(a, b);
        default:
            if constexpr (std::is_integral_v<T>)
                return static_cast<T>(op == MSG_BAND ? (a & b) : (a | b));
            return a;
    }
}

// Inputs repeat every kPeriod elements, so the serial result of a large count is computed once
// per period (nine ranks computing 1 Mi elements each from every rank's input would take longer
// than the collectives).
constexpr size_t kPeriod = 61 * 3;

template <typename T>
std::vector<T> input(int r, size_t count) {
    std::vector<T> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = i < kPeriod ? value_of<T>(r, i) : v[i - kPeriod];
    return v;
}

// op < 0: the user reduction (a sum).
template <typename T>
std::vector<T> expected(int size, size_t count, int op) {
    const size_t head = std::min(count, kPeriod);
    std::vector<T> acc = input<T>(0, count);
    for (int r = 1; r < size; ++r)
        for (size_t i = 0; i < head; ++i)
            acc[i] = combine<T>(op < 0 ? MSG_SUM : op, value_of<T>(r, i), acc[i]);
    for (size_t i = head; i < count; ++i) acc[i] = acc[i - kPeriod];
    return acc;
}

template <typename T>
void user_sum(const void *in, void *inout, size_t count, void *arg) {
    const T *a = static_cast<const T *>(in);
    T *b = static_cast<T *>(inout);
    for (size_t i = 0; i < count; ++i) b[i] = static_cast<T>(a[i] + b[i]);
    ++*static_cast<uint64_t *>(arg);
}

struct Ctx {
    Job &job;
    int user_ops[7] = {};  // by datatype
    uint64_t user_calls = 0;
};

const char *type_name(int t) {
    static const char *names[] = {"?", "int32", "int64", "uint32", "uint64", "float", "double"};
    return names[t];
}

// Collectives issued nonblocking, many at once, and checked once all have completed: each
// keeps its buffers and its check until then.
struct Pending {
    std::vector<std::vector<char>> buffers;
    std::function<void(Pending &)> check;
    template <typename T>
    T *vec(size_t count) {
        buffers.emplace_back(count * sizeof(T) + 1);
        return reinterpret_cast<T *>(buffers.back().data());
    }
};

struct Batch {
    explicit Batch(Job &job) : job(job), cq(job.ctx()) {}
    Job &job;
    Cq cq;
    std::vector<std::unique_ptr<Pending>> items;
    Pending &add() { return *items.emplace_back(std::make_unique<Pending>()); }
    // Waits for every collective issued (each completing once, with its own cookie), then checks.
    void finish() {
        std::vector<bool> done(items.size());
        for (size_t n = 0; n < items.size(); ++n) {
            const msg_completion_t c = wait_completion(cq.get(), "a nonblocking collective");
            WCHECK(c.op == MSG_OP_COLLECTIVE && c.status == MSG_OK, "collective completed as %s",
                   describe(c).c_str());
            const size_t i = static_cast<size_t>(reinterpret_cast<uintptr_t>(c.cookie));
            WCHECK(i < items.size() && !done[i], "unknown or repeated cookie %zu", i);
            done[i] = true;
        }
        for (auto &p : items) p->check(*p);
        items.clear();
    }
    void *cookie() const {
        return reinterpret_cast<void *>(static_cast<uintptr_t>(items.size() - 1));
    }
};

// iallreduce (in place too when asked) and ireduce to `root`, checked against the serial result.
template <typename T>
void issue_reduction(Batch &b, int type, int op, int code, size_t count, int root, bool in_place) {
    Job &job = b.job;
    const std::vector<T> in = input<T>(job.rank, count);
    auto want = std::make_shared<std::vector<T>>(expected<T>(job.size, count, op));
    for (int form = in_place ? 0 : 1; form < 3; ++form) {
        if (form == 2 && root < 0) break;
        Pending &p = b.add();
        T *src = p.vec<T>(count);
        T *dst = form == 0 ? src : p.vec<T>(count);
        std::copy(in.begin(), in.end(), src);
        if (form == 2) {
            WSTATUS(msg_ireduce(job.ctx(), src, job.rank == root ? dst : nullptr, count, type, code,
                                root, b.cq.get(), b.cookie()),
                    MSG_OK);
            if (job.rank != root) dst = nullptr;
        } else {
            WSTATUS(msg_iallreduce(job.ctx(), src, dst, count, type, code, b.cq.get(), b.cookie()),
                    MSG_OK);
        }
        p.check = [=, rank = job.rank](Pending &) {
            if (dst == nullptr) return;
            WCHECK(std::equal(want->begin(), want->end(), dst),
                   "rank %d: %s %s op %d count %zu: wrong result", rank,
                   form == 2   ? "reduce"
                   : form == 0 ? "allreduce in place"
                               : "allreduce",
                   type_name(type), op, count);
        };
    }
}

template <typename T>
void check_type(Ctx &c, int type) {
    const int size = c.job.size;
    Batch b(c.job);
    for (int op : kOps) {
        const bool floating = std::is_floating_point_v<T>;
        if (floating && (op == MSG_BAND || op == MSG_BOR)) {
            std::vector<T> x(4);
            WSTATUS(msg_allreduce(c.job.ctx(), x.data(), x.data(), 4, type, op),
                    MSG_ERR_INVALID_ARG);
            continue;
        }
        for (size_t count : {size_t{0}, size_t{1}, size_t{100}})
            issue_reduction<T>(b, type, op, op, count, (op + static_cast<int>(count)) % size,
                               count == 100);
    }
    issue_reduction<T>(b, type, -1, c.user_ops[type], 100, 0, false);
    // The middle size (recursive halving and doubling at 8 ranks and more, the ring below) and
    // the large one (the ring; page faults on fresh memory make each one costly here): the sum
    // for int32 (with reduce and in place) and double, and a bitwise op. The other types share
    // every line of that path but the arithmetic.
    if (type == MSG_INT32 || type == MSG_DOUBLE)
        issue_reduction<T>(b, type, MSG_SUM, MSG_SUM, kMiddle, 0, false);
    if (type == MSG_INT32) {
        issue_reduction<T>(b, type, MSG_SUM, MSG_SUM, kLarge, size - 1, true);
        issue_reduction<T>(b, type, MSG_BOR, MSG_BOR, kLarge, -1, false);
    }
    if (type == MSG_DOUBLE) issue_reduction<T>(b, type, MSG_SUM, MSG_SUM, kLarge, -1, false);
    b.finish();
}

// "large": every type with every op at the large size, allreduce and reduce, one at a time.
template <typename T>
void check_large_type(Ctx &c, int type) {
    for (int op : kOps) {
        if (std::is_floating_point_v<T> && (op == MSG_BAND || op == MSG_BOR)) continue;
        Batch b(c.job);
        issue_reduction<T>(b, type, op, op, kLarge, (op + 1) % c.job.size, false);
        b.finish();
    }
}

void check_large(Ctx &c) {
    check_large_type<int32_t>(c, MSG_INT32);
    check_large_type<int64_t>(c, MSG_INT64);
    check_large_type<uint32_t>(c, MSG_UINT32);
    check_large_type<uint64_t>(c, MSG_UINT64);
    check_large_type<float>(c, MSG_FLOAT);
    check_large_type<double>(c, MSG_DOUBLE);
}

void check_reductions(Ctx &c) {
    for (int t : kTypes) {
        msg_reduce_fn fn = nullptr;
        switch (t) {
            case MSG_INT32:
                fn = user_sum<int32_t>;
                break;
            case MSG_INT64:
                fn = user_sum<int64_t>;
                break;
            case MSG_UINT32:
                fn = user_sum<uint32_t>;
                break;
            case MSG_UINT64:
                fn = user_sum<uint64_t>;
                break;
            case MSG_FLOAT:
                fn = user_sum<float>;
                break;
            default:
                fn = user_sum<double>;
                break;
        }
        WSTATUS(msg_reduction_create(c.job.ctx(), fn, &c.user_calls, &c.user_ops[t]), MSG_OK);
    }
    check_type<int32_t>(c, MSG_INT32);
    check_type<int64_t>(c, MSG_INT64);
    check_type<uint32_t>(c, MSG_UINT32);
    check_type<uint64_t>(c, MSG_UINT64);
    check_type<float>(c, MSG_FLOAT);
    check_type<double>(c, MSG_DOUBLE);
    if (c.job.size > 1) WCHECK(c.user_calls > 0, "the user reduction was never called");
    for (int t : kTypes) WSTATUS(msg_reduction_free(c.job.ctx(), c.user_ops[t]), MSG_OK);
}

std::vector<unsigned char> block(int from, int to, size_t bytes) {
    std::vector<unsigned char> b(bytes);
    for (size_t i = 0; i < bytes; ++i) b[i] = byte_of(from, to, i);
    return b;
}

// Block `at` of buf equals block(from, to).
void expect_block(const std::vector<unsigned char> &buf, size_t at, int from, int to, size_t bytes,
                  const char *what) {
    for (size_t i = 0; i < bytes; ++i)
        WCHECK(buf[at * bytes + i] == byte_of(from, to, i), "%s: block %zu byte %zu of %zu wrong",
               what, at, i, bytes);
}

void check_bytes_calls(Job &job, size_t bytes, int root) {
    const int p = job.size, r = job.rank;
    const auto up = static_cast<size_t>(p);
    std::vector<unsigned char> buf =
        r == root ? block(root, 0, bytes) : std::vector<unsigned char>(bytes);
    WSTATUS(msg_bcast(job.ctx(), buf.data(), bytes, root), MSG_OK);
    expect_block(buf, 0, root, 0, bytes, "bcast");
    std::vector<unsigned char> mine = block(r, root, bytes), all(up * bytes);
    WSTATUS(msg_gather(job.ctx(), mine.data(), bytes, r == root ? all.data() : nullptr, root),
            MSG_OK);
    if (r == root)
        for (int i = 0; i < p; ++i)
            expect_block(all, static_cast<size_t>(i), i, root, bytes, "gather");
    WSTATUS(msg_allgather(job.ctx(), mine.data(), bytes, all.data()), MSG_OK);
    for (int i = 0; i < p; ++i)
        expect_block(all, static_cast<size_t>(i), i, root, bytes, "allgather");
    std::vector<unsigned char> deal(up * bytes), got(bytes);
    for (int i = 0; i < p && r == root; ++i)
        std::memcpy(deal.data() + static_cast<size_t>(i) * bytes, block(root, i, bytes).data(),
                    bytes);
    WSTATUS(msg_scatter(job.ctx(), r == root ? deal.data() : nullptr, bytes, got.data(), root),
            MSG_OK);
    expect_block(got, 0, root, r, bytes, "scatter");
    std::vector<unsigned char> out(up * bytes), in(up * bytes);
    for (int i = 0; i < p; ++i)
        std::memcpy(out.data() + static_cast<size_t>(i) * bytes, block(r, i, bytes).data(), bytes);
    WSTATUS(msg_alltoall(job.ctx(), out.data(), bytes, in.data()), MSG_OK);
    for (int i = 0; i < p; ++i) expect_block(in, static_cast<size_t>(i), i, r, bytes, "alltoall");
}

// alltoallv: rank i sends rank j (i + 2j) % 5 * bytes / 4 bytes, packed with gaps.
void check_alltoallv(Job &job, size_t bytes) {
    const auto up = static_cast<size_t>(job.size);
    auto amount = [&](int from, int to) {
        return static_cast<size_t>((from + 2 * to) % 5) * bytes / 4;
    };
    std::vector<size_t> sc(up), sd(up), rc(up), rd(up);
    size_t stotal = 0, rtotal = 0;
    for (size_t j = 0; j < up; ++j) {
        sc[j] = amount(job.rank, static_cast<int>(j));
        sd[j] = stotal;
        stotal += sc[j] + 3;
        rc[j] = amount(static_cast<int>(j), job.rank);
        rd[j] = rtotal;
        rtotal += rc[j] + 5;
    }
    std::vector<unsigned char> out(stotal), in(rtotal, 0xee);
    for (size_t j = 0; j < up; ++j)
        std::memcpy(out.data() + sd[j], block(job.rank, static_cast<int>(j), sc[j]).data(), sc[j]);
    WSTATUS(
        msg_alltoallv(job.ctx(), out.data(), sc.data(), sd.data(), in.data(), rc.data(), rd.data()),
        MSG_OK);
    for (size_t j = 0; j < up; ++j) {
        for (size_t i = 0; i < rc[j]; ++i)
            WCHECK(in[rd[j] + i] == byte_of(static_cast<int>(j), job.rank, i),
                   "alltoallv from %zu: byte %zu of %zu wrong", j, i, rc[j]);
        for (size_t i = 0; i < 5; ++i)
            WCHECK(in[rd[j] + rc[j] + i] == 0xee, "alltoallv wrote into the gap after rank %zu", j);
    }
}

}  // namespace
}  // namespace coll_results

void run_collectives(const Args &args) {
    using namespace coll_results;
    const std::string what = args.empty() ? "all" : args[0];
    Job job;
    Ctx c{job};
    say("collectives %s on %d ranks", what.c_str(), job.size);
    // An application's wildcard receive, open throughout: no collective message may match it.
    Cq app(job.ctx());
    char app_buf[64];
    WSTATUS(msg_irecv(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, app_buf, sizeof app_buf, app.get(),
                      nullptr),
            MSG_OK);
    if (what == "all" || what == "reduce") check_reductions(c);
    if (what == "large") check_large(c);
    if (what == "all" || what == "bytes") {
        for (size_t bytes : {size_t{0}, size_t{1}, size_t{1000}})
            for (int root : {0, job.size - 1, job.size / 2}) check_bytes_calls(job, bytes, root);
        check_bytes_calls(job, kLarge, job.size / 2);
        for (size_t bytes : {size_t{0}, size_t{1}, kLarge}) check_alltoallv(job, bytes);
    }
    msg_completion_t w{};
    WSTATUS(msg_cq_wait(app.get(), 0, &w), MSG_ERR_TIMEOUT);
    size_t canceled = 0;
    WSTATUS(msg_cq_cancel_recvs(app.get(), &canceled), MSG_OK);
    WCHECK(canceled == 1, "the wildcard receive was taken (%zu canceled)", canceled);
    w = wait_completion(app.get(), "the canceled wildcard receive");
    WCHECK(w.status == MSG_ERR_CANCELED, "wildcard receive: %s", describe(w).c_str());
    app.destroy();
    job.finalize();
}

}  // namespace worker
