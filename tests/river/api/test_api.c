/* river's public API from C, in a job of one (rank 0 is the river's only
 * source and sink): status text, option checks, the built-in pick functions,
 * a flow to itself with its checksum, the credit bound seen through
 * river_try_put, and the errors of misuse. `river_c_api [CASE]` runs one case
 * or all of them; the exit status is the number of failed checks. */
#include <msg/msg.h>
#include <pthread.h>
#include <river/river.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                     \
        }                                                                   \
    } while (0)

#define CHECK_STATUS(call, want)                                                             \
    do {                                                                                     \
        int got_ = (call);                                                                   \
        if (got_ != (want)) {                                                                \
            fprintf(stderr, "FAIL %s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, \
                    __LINE__, #call, got_, river_strerror(got_), (int)(want),                \
                    river_strerror(want));                                                   \
            ++failures;                                                                      \
        }                                                                                    \
    } while (0)

static msg_context_t *ctx;

/* ---- records: a sequence number, its hash, and filler ---- */
enum { kRecord = 24 };

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void make_record(unsigned char *rec, uint64_t seq) {
    uint64_t h = mix64(seq);
    memcpy(rec, &seq, 8);
    memcpy(rec + 8, &h, 8);
    memset(rec + 16, (int)(seq & 0xff), kRecord - 16);
}

static river_options_t self_options(size_t records_per_batch, int credits) {
    river_options_t o;
    river_options_init(&o);
    o.record_size = kRecord;
    o.batch_size = records_per_batch * kRecord;
    o.credits = credits;
    o.timeout_ms = 20000;
    return o;
}

/* ---- cases ---- */

static void test_strerror(void) {
    const int codes[] = {RIVER_END,
                         RIVER_ERR_WOULD_BLOCK,
                         RIVER_ERR_BAD_BATCH,
                         RIVER_ERR_PROTOCOL,
                         RIVER_ERR_MISMATCH,
                         RIVER_ERR_SOURCE_ABORTED,
                         RIVER_ERR_SINK_CLOSED,
                         RIVER_ERR_ENDED,
                         RIVER_ERR_NOT_SOURCE,
                         RIVER_ERR_NOT_SINK,
                         RIVER_ERR_PICK,
                         RIVER_ERR_TIMEOUT};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; ++i) {
        const char *text = river_strerror(codes[i]);
        CHECK(text != NULL && text[0] != '\0');
        for (size_t j = 0; j < i; ++j) CHECK(strcmp(text, river_strerror(codes[j])) != 0);
    }
    /* libmsg's codes pass through. */
    CHECK(strcmp(river_strerror(MSG_ERR_PEER_FAILED), msg_strerror(MSG_ERR_PEER_FAILED)) == 0);
    CHECK(river_strerror(-12345) != NULL);
}

static void test_options(void) {
    river_options_t o;
    river_options_init(&o);
    CHECK(o.batch_size == 256 * 1024);
    CHECK(o.credits == 4);
    CHECK(o.tag == RIVER_TAG_DEFAULT);
    CHECK(o.record_size == 0 && o.sources == NULL && o.sinks == NULL && o.pick == NULL);
}

static void expect_refused(river_options_t o) {
    river_t *r = (river_t *)&o; /* must be reset to NULL */
    CHECK_STATUS(river_open(ctx, &o, &r), MSG_ERR_INVALID_ARG);
    CHECK(r == NULL);
}

static void test_open_refuses(void) {
    river_options_t base = self_options(10, 2);
    river_t *r = NULL;
    CHECK_STATUS(river_open(NULL, &base, &r), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_open(ctx, NULL, &r), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_open(ctx, &base, NULL), MSG_ERR_INVALID_ARG);
    river_options_t o = base;
    o.record_size = 0;
    expect_refused(o);
    o = base, o.batch_size = 0;
    expect_refused(o);
    o = base, o.credits = 0;
    expect_refused(o);
    o = base, o.credits = 5000;
    expect_refused(o);
    o = base, o.tag = -1;
    expect_refused(o);
    o = base, o.tag = MSG_TAG_MAX;
    expect_refused(o);
    o = base, o.timeout_ms = -1;
    expect_refused(o);
    const int outside[] = {1}, twice[] = {0, 0};
    o = base, o.sources = outside, o.nsources = 1;
    expect_refused(o);
    o = base, o.sinks = twice, o.nsinks = 2;
    expect_refused(o);
    o = base, o.sinks = outside, o.nsinks = 0;
    expect_refused(o);
    o = base, o.nsources = 1; /* a count without a list */
    expect_refused(o);
    o = base, o.pick = river_pick_range, o.pick_arg = NULL;
    expect_refused(o);
    river_range_t beyond = {NULL, kRecord - 2, 4};
    o = base, o.pick = river_pick_range, o.pick_arg = &beyond;
    expect_refused(o);
    river_hash_t empty_key = {0, 0};
    o = base, o.pick = river_pick_hash, o.pick_arg = &empty_key;
    expect_refused(o);
}

static void test_pick_range(void) {
    const char splitters[] = {'b', 'd'};
    river_range_t range = {splitters, 1, 1};
    const char *keys = "abcdez";
    const int want[] = {0, 1, 1, 2, 2, 2};
    for (int i = 0; i < 6; ++i) {
        unsigned char rec[4] = {'x', (unsigned char)keys[i], 0, 0};
        CHECK(river_pick_range(&range, rec, sizeof rec, 3) == want[i]);
    }
    /* Unsigned comparison: 0xff sorts after 'd'. */
    unsigned char high[4] = {0, 0xff, 0, 0};
    CHECK(river_pick_range(&range, high, sizeof high, 3) == 2);
    /* One sink takes everything without splitters. */
    river_range_t whole = {NULL, 0, 2};
    CHECK(river_pick_range(&whole, high, sizeof high, 1) == 0);
    /* A key outside the record, or no splitters for several sinks, is refused. */
    river_range_t beyond = {splitters, 3, 2};
    CHECK(river_pick_range(&beyond, high, sizeof high, 3) < 0);
    CHECK(river_pick_range(&whole, high, sizeof high, 3) < 0);
    CHECK(river_pick_range(NULL, high, sizeof high, 3) < 0);
}

static void test_pick_hash(void) {
    int hits[5] = {0};
    unsigned char rec[kRecord];
    for (uint64_t i = 0; i < 1000; ++i) {
        make_record(rec, i);
        int s = river_pick_hash(NULL, rec, kRecord, 5);
        CHECK(s >= 0 && s < 5);
        if (s >= 0 && s < 5) ++hits[s];
        CHECK(s == river_pick_hash(NULL, rec, kRecord, 5));
    }
    for (int s = 0; s < 5; ++s) CHECK(hits[s] > 100);
    /* Only the key counts. */
    river_hash_t key = {0, 8};
    make_record(rec, 77);
    int first = river_pick_hash(&key, rec, kRecord, 7);
    memset(rec + 8, 0xab, kRecord - 8);
    CHECK(river_pick_hash(&key, rec, kRecord, 7) == first);
    river_hash_t beyond = {kRecord, 1};
    CHECK(river_pick_hash(&beyond, rec, kRecord, 7) < 0);
}

struct putter {
    river_t *river;
    uint64_t count;
    int status;
};

static void *put_all(void *arg) {
    struct putter *p = arg;
    unsigned char rec[kRecord];
    p->status = RIVER_OK;
    for (uint64_t i = 0; i < p->count && p->status == RIVER_OK; ++i) {
        make_record(rec, i);
        p->status = (i % 3 == 0) ? river_put_records(p->river, rec, 1) : river_put(p->river, rec);
    }
    if (p->status == RIVER_OK) p->status = river_end(p->river);
    return NULL;
}

static void test_flow_to_self(void) {
    river_options_t o = self_options(50, 3);
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL) return;
    int src = -2, snk = -2;
    CHECK_STATUS(river_role(r, &src, &snk), RIVER_OK);
    CHECK(src == 0 && snk == 0);
    struct putter p = {r, 10007, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, put_all, &p);
    unsigned char rec[kRecord];
    uint64_t got = 0, sum = 0, want_sum = 0;
    int rc;
    while ((rc = river_get(r, rec)) == RIVER_OK) {
        uint64_t seq, h;
        memcpy(&seq, rec, 8);
        memcpy(&h, rec + 8, 8);
        CHECK(seq == got); /* one source: its order */
        CHECK(h == mix64(seq));
        sum += h;
        ++got;
    }
    pthread_join(thread, NULL);
    CHECK_STATUS(rc, RIVER_END);
    CHECK_STATUS(p.status, RIVER_OK);
    for (uint64_t i = 0; i < p.count; ++i) want_sum += mix64(i);
    CHECK(got == p.count && sum == want_sum);
    river_stats_t s;
    CHECK_STATUS(river_get_stats(r, &s), RIVER_OK);
    CHECK(s.records_put == p.count && s.records_got == p.count);
    CHECK(s.bytes_put == p.count * kRecord && s.bytes_got == p.count * kRecord);
    CHECK(s.batches_sent == (p.count + 49) / 50 && s.batches_received == s.batches_sent);
    CHECK(s.peak_in_flight <= 3 && s.peak_sink_batches <= 3);
    CHECK(s.peak_source_bytes <= s.source_bytes_bound);
    CHECK(s.sink_bytes == 3 * 50 * kRecord);
    CHECK(s.bad_batches == 0 && s.bad_messages == 0);
    CHECK_STATUS(river_get(r, rec), RIVER_END);
    CHECK_STATUS(river_error(r, NULL, NULL, 0), RIVER_OK);
    CHECK_STATUS(river_close(r), RIVER_OK);
}

/* ---- sink-provided memory ---- */

/* Hands out consecutive regions of an arena; `limit` calls at most, then NULL. */
struct arena {
    unsigned char *base;
    size_t stride, regions, calls, limit;
    int bad_source; /* set if place was asked for another source than 0 */
};

static void *place_region(void *arg, int source, size_t bytes) {
    struct arena *a = arg;
    if (source != 0 || bytes > a->stride) a->bad_source = 1;
    if (a->calls == a->limit || a->calls == a->regions) return NULL;
    return a->base + a->stride * a->calls++;
}

static void test_placed(void) {
    /* 40 records a batch, 3 credits: the k-th batch lands in the k-th region placed (one
     * source's batches match its receives in order), and its records stay there, untouched,
     * after the batch is released and the river closed. */
    river_options_t o = self_options(40, 3);
    struct arena a = {NULL, 40 * kRecord + 64, 400, 0, 400, 0};
    a.base = malloc(a.stride * a.regions);
    o.place = place_region;
    o.place_arg = &a;
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL || a.base == NULL) return;
    CHECK(a.calls == 3);
    struct putter p = {r, 10007, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, put_all, &p);
    river_batch_t b;
    size_t batches = 0, counts[400];
    int rc;
    while ((rc = river_get_batch(r, &b, -1)) == RIVER_OK && batches < 400) {
        CHECK((const unsigned char *)b.records == a.base + a.stride * batches);
        counts[batches++] = b.count;
        CHECK_STATUS(river_release(r, &b), RIVER_OK);
    }
    pthread_join(thread, NULL);
    CHECK_STATUS(rc, RIVER_END);
    CHECK_STATUS(p.status, RIVER_OK);
    CHECK_STATUS(river_close(r), RIVER_OK);
    CHECK(batches == (10007 + 39) / 40 && a.calls >= batches && a.calls <= batches + 3);
    CHECK(!a.bad_source);
    uint64_t seq = 0;
    for (size_t k = 0; k < batches; ++k) {
        for (size_t i = 0; i < counts[k]; ++i, ++seq) {
            unsigned char want[kRecord];
            make_record(want, seq);
            if (memcmp(a.base + a.stride * k + i * kRecord, want, kRecord) != 0) {
                CHECK(!"a placed record differs from the one put");
                k = batches;
                break;
            }
        }
    }
    CHECK(seq == 10007);
    free(a.base);
}

static void test_placed_none(void) {
    /* No memory at open: river_open fails. No memory later: the release that asks for it
     * fails, the river's error names the source, and the putting side stops. */
    river_options_t o = self_options(40, 2);
    struct arena a = {NULL, 40 * kRecord + 64, 8, 0, 1, 0};
    a.base = malloc(a.stride * a.regions);
    o.place = place_region;
    o.place_arg = &a;
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), MSG_ERR_NO_MEMORY);
    CHECK(r == NULL);
    a.calls = 0;
    a.limit = 4;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL || a.base == NULL) return;
    struct putter p = {r, 10007, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, put_all, &p);
    river_batch_t b;
    int rc, released = RIVER_OK;
    while (released == RIVER_OK && (rc = river_get_batch(r, &b, -1)) == RIVER_OK)
        released = river_release(r, &b);
    CHECK_STATUS(released, MSG_ERR_NO_MEMORY);
    pthread_join(thread, NULL);
    CHECK_STATUS(p.status, MSG_ERR_NO_MEMORY);
    char text[200] = "";
    CHECK_STATUS(river_error(r, NULL, text, sizeof text), MSG_ERR_NO_MEMORY);
    CHECK(strstr(text, "no memory placed") != NULL && strstr(text, "source rank 0") != NULL);
    CHECK(river_close(r) == MSG_ERR_NO_MEMORY);
    free(a.base);
}

static size_t drain_batches(river_t *r, int timeout_ms, int *last) {
    river_batch_t b;
    size_t records = 0;
    while ((*last = river_get_batch(r, &b, timeout_ms)) == RIVER_OK) {
        CHECK((uintptr_t)b.records % 4096 == 0);
        CHECK(b.source == 0);
        records += b.count;
        CHECK_STATUS(river_release(r, &b), RIVER_OK);
    }
    return records;
}

static void test_credit_bound(void) {
    /* 2 credits, 10 records a batch: 2 batches in flight and 1 being filled, then no more. */
    river_options_t o = self_options(10, 2);
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL) return;
    unsigned char rec[kRecord];
    uint64_t taken = 0;
    int rc;
    for (;;) {
        make_record(rec, taken);
        if ((rc = river_try_put(r, rec)) != RIVER_OK) break;
        ++taken;
    }
    CHECK_STATUS(rc, RIVER_ERR_WOULD_BLOCK);
    CHECK(taken == (2 + 1) * 10);
    river_stats_t s;
    CHECK_STATUS(river_get_stats(r, &s), RIVER_OK);
    CHECK(s.records_put == taken && s.batches_sent == 2);
    CHECK(s.peak_in_flight == 2 && s.credit_waits >= 1);
    CHECK(s.peak_source_bytes <= s.source_bytes_bound);
    CHECK(s.source_bytes_bound == 3 * (10 * kRecord + 64));
    /* The two batches sent arrive; the third leaves only when the source next
     * calls the river with a credit back. */
    river_batch_t b;
    for (int i = 0; i < 2; ++i) {
        CHECK_STATUS(river_get_batch(r, &b, -1), RIVER_OK);
        CHECK(b.count == 10);
        CHECK_STATUS(river_release(r, &b), RIVER_OK);
    }
    CHECK_STATUS(river_get_batch(r, &b, 0), RIVER_ERR_WOULD_BLOCK);
    int last;
    CHECK_STATUS(river_end(r), RIVER_OK);
    CHECK(drain_batches(r, -1, &last) == 10);
    CHECK_STATUS(last, RIVER_END);
    CHECK_STATUS(river_get_stats(r, &s), RIVER_OK);
    CHECK(s.records_got == 30 && s.batches_received == 3 && s.peak_sink_batches <= 2);
    CHECK_STATUS(river_close(r), RIVER_OK);
}

static void test_misuse(void) {
    river_options_t o = self_options(8, 2);
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL) return;
    unsigned char rec[kRecord];
    make_record(rec, 1);
    river_batch_t b;
    CHECK_STATUS(river_get_batch(r, &b, 0), RIVER_ERR_WOULD_BLOCK);
    CHECK_STATUS(river_get_batch(r, &b, 10), RIVER_ERR_WOULD_BLOCK);
    CHECK_STATUS(river_put_to(r, 1, rec, 1), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_put_to(r, -1, rec, 1), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_put(r, NULL), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_put_to(r, 0, rec, 1), RIVER_OK);
    CHECK_STATUS(river_flush(r), RIVER_OK);
    CHECK_STATUS(river_get_batch(r, &b, -1), RIVER_OK);
    CHECK(b.count == 1);
    river_batch_t forged = b;
    forged.slot = 999ull << 32;
    CHECK_STATUS(river_release(r, &forged), MSG_ERR_INVALID_ARG);
    river_batch_t copy = b;
    CHECK_STATUS(river_release(r, &b), RIVER_OK);
    CHECK_STATUS(river_release(r, &copy), MSG_ERR_INVALID_ARG); /* twice */
    CHECK_STATUS(river_end(r), RIVER_OK);
    CHECK_STATUS(river_end(r), RIVER_ERR_ENDED);
    CHECK_STATUS(river_put(r, rec), RIVER_ERR_ENDED);
    CHECK_STATUS(river_flush(r), RIVER_ERR_ENDED);
    CHECK_STATUS(river_get(r, rec), RIVER_END);
    CHECK_STATUS(river_get_batch(r, &b, 0), RIVER_END);
    CHECK_STATUS(river_close(r), RIVER_OK);
    CHECK_STATUS(river_close(NULL), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_put(NULL, rec), MSG_ERR_INVALID_ARG);
    CHECK_STATUS(river_get(NULL, rec), MSG_ERR_INVALID_ARG);
}

static int pick_first_byte(void *arg, const void *record, size_t size, int nsinks) {
    (void)arg;
    (void)size;
    /* Refuses records whose first byte is 0xee. */
    return ((const unsigned char *)record)[0] == 0xee ? -1 : nsinks - 1;
}

static void test_own_pick(void) {
    river_options_t o = self_options(4, 2);
    o.pick = pick_first_byte;
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL) return;
    unsigned char rec[kRecord] = {0};
    CHECK_STATUS(river_put(r, rec), RIVER_OK);
    rec[0] = 0xee;
    CHECK_STATUS(river_put(r, rec), RIVER_ERR_PICK);
    CHECK_STATUS(river_put_records(r, rec, 1), RIVER_ERR_PICK);
    CHECK_STATUS(river_end(r), RIVER_OK);
    int last;
    CHECK(drain_batches(r, -1, &last) == 1);
    CHECK_STATUS(last, RIVER_END);
    CHECK_STATUS(river_close(r), RIVER_OK);
}

static void test_get_mixed(void) {
    /* river_get takes one record of a batch; river_get_batch then hands out the rest of it. */
    river_options_t o = self_options(8, 2);
    river_t *r = NULL;
    CHECK_STATUS(river_open(ctx, &o, &r), RIVER_OK);
    if (r == NULL) return;
    unsigned char rec[kRecord];
    for (uint64_t i = 0; i < 10; ++i) {
        make_record(rec, i);
        CHECK_STATUS(river_put(r, rec), RIVER_OK);
    }
    CHECK_STATUS(river_end(r), RIVER_OK);
    uint64_t seq = 99;
    CHECK_STATUS(river_get(r, rec), RIVER_OK);
    memcpy(&seq, rec, 8);
    CHECK(seq == 0);
    river_batch_t b;
    CHECK_STATUS(river_get_batch(r, &b, -1), RIVER_OK);
    CHECK(b.count == 7);
    memcpy(&seq, b.records, 8);
    CHECK(seq == 1);
    CHECK_STATUS(river_release(r, &b), RIVER_OK);
    CHECK_STATUS(river_get_batch(r, &b, -1), RIVER_OK);
    CHECK(b.count == 2);
    CHECK_STATUS(river_release(r, &b), RIVER_OK);
    CHECK_STATUS(river_get(r, rec), RIVER_END);
    CHECK_STATUS(river_close(r), RIVER_OK);
}

struct test_case {
    const char *name;
    void (*run)(void);
};

static const struct test_case cases[] = {
    {"strerror", test_strerror},
    {"options", test_options},
    {"open_refuses", test_open_refuses},
    {"pick_range", test_pick_range},
    {"pick_hash", test_pick_hash},
    {"flow_to_self", test_flow_to_self},
    {"credit_bound", test_credit_bound},
    {"misuse", test_misuse},
    {"own_pick", test_own_pick},
    {"get_mixed", test_get_mixed},
    {"placed", test_placed},
    {"placed_none", test_placed_none},
};

int main(int argc, char **argv) {
    if (msg_init(NULL, &ctx) != MSG_OK) {
        fprintf(stderr, "FAIL: msg_init\n");
        return 1;
    }
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) continue;
        const int before = failures;
        cases[i].run();
        printf("%s %s\n", failures == before ? "ok  " : "FAIL", cases[i].name);
        ++ran;
    }
    msg_finalize(ctx);
    msg_destroy(ctx);
    if (ran == 0) {
        fprintf(stderr, "no case named %s\n", argc > 1 ? argv[1] : "");
        return 1;
    }
    return failures > 0 ? 1 : 0;
}
