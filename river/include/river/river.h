/* river: record flows from sources to sinks over a libmsg job (the NT cluster
 * RiverSystem and NOW-Sort's communication phase). Built on libmsg only. */
#ifndef RIVER_RIVER_H
#define RIVER_RIVER_H

#include <msg/msg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ----
 * 0 is success and RIVER_END (positive) is the end of a sink's flow. libmsg's
 * codes (-1 .. -99) pass through unchanged, e.g. MSG_ERR_PEER_FAILED when a
 * source or sink of the river failed; river's own are -200 and below. */
enum river_status {
    RIVER_OK = 0,
    RIVER_END = 1,                   /* every source has ended and every record was got */
    RIVER_ERR_WOULD_BLOCK = -200,    /* no credit or room now (try_put); nothing in time (get) */
    RIVER_ERR_BAD_BATCH = -201,      /* a batch failed validation (sizes, counts, source) */
    RIVER_ERR_PROTOCOL = -202,       /* a control message failed validation */
    RIVER_ERR_MISMATCH = -203,       /* the ranks of the river disagree on its settings */
    RIVER_ERR_SOURCE_ABORTED = -204, /* a source closed the river without river_end */
    RIVER_ERR_SINK_CLOSED = -205,    /* a sink closed the river before its flow ended */
    RIVER_ERR_ENDED = -206,          /* put after river_end */
    RIVER_ERR_NOT_SOURCE = -207,     /* put or end on a rank that is not a source */
    RIVER_ERR_NOT_SINK = -208,       /* get on a rank that is not a sink */
    RIVER_ERR_PICK = -209,           /* the pick function chose no valid sink */
    RIVER_ERR_TIMEOUT = -210         /* open or close gave up on a peer silent for timeout_ms */
};

/* Readable text for a river or libmsg status; never NULL. */
const char *river_strerror(int status);

/* The river uses RIVER_TAGS libmsg tags from river_options_t.tag on, all
 * within the application's tags (at most MSG_TAG_USER_MAX; libmsg reserves
 * the rest for libremoteio). An application sending its own messages on the
 * same context, or opening several rivers at once, keeps them apart. */
#define RIVER_TAGS 3
#define RIVER_TAG_DEFAULT 0x30000000

/* ---- pick-stream: which sink a record goes to ----
 * Returns the sink's index in [0, nsinks) (its position in the sinks list),
 * or a negative value to refuse the record (river_put then returns
 * RIVER_ERR_PICK). Called on the putting thread. */
typedef int (*river_pick_fn)(void *arg, const void *record, size_t record_size, int nsinks);

/* Range partition by splitters: a record's key is the key_len bytes at
 * key_offset, compared as unsigned bytes (memcmp). splitters holds nsinks - 1
 * keys of key_len bytes each, ascending; sink i gets the keys k with
 * splitters[i-1] <= k < splitters[i]. pick_arg: a river_range_t. */
typedef struct river_range {
    const void *splitters;
    size_t key_offset;
    size_t key_len;
} river_range_t;
int river_pick_range(void *range, const void *record, size_t record_size, int nsinks);

/* Hash partition: FNV-1a of the key_len bytes at key_offset, modulo nsinks.
 * pick_arg: a river_hash_t, or NULL for the whole record. */
typedef struct river_hash {
    size_t key_offset;
    size_t key_len;
} river_hash_t;
int river_pick_hash(void *hash, const void *record, size_t record_size, int nsinks);

/* ---- sink-provided memory: where a batch lands ----
 * Returns memory of at least `bytes` bytes (a whole batch and the river's
 * trailer after its records) where the next batch from the source at
 * index `source` is received, or NULL when there is none (the river then
 * fails with MSG_ERR_NO_MEMORY). The batch's records start at the returned
 * address, so they are got where the application wants them (a run buffer,
 * say) with no copy out of the river's own buffers. The memory is the
 * river's until the batch that lands there is got (river_get_batch); from then
 * on it is the application's again, records included (river_release does not
 * touch it). Memory no batch landed in is the river's until river_close
 * returns. Called on the sink: in river_open, `credits` times per source, and
 * in river_release of a batch whose source will send more. It must not call
 * the river. */
typedef void *(*river_place_fn)(void *arg, int source, size_t bytes);
/* The trailer after a batch's records: bytes = records x record_size +
 * RIVER_TRAILER_BYTES. */
#define RIVER_TRAILER_BYTES 64

/* ---- opening a river ---- */
typedef struct river_options {
    /* Bytes per record (required, at least 1). */
    size_t record_size;
    /* Bytes of records per batch message: a batch holds
     * max(1, batch_size / record_size) records (256 KiB). */
    size_t batch_size;
    /* Batches a sink lets each source have in flight to it: the sink keeps
     * that many receive buffers per source and grants one back each time
     * the application releases a batch (4). */
    int credits;
    /* The ranks that put, and those that get; a rank may be both. NULL:
     * every rank of the job. Positions in these lists are the source and
     * sink indexes. */
    const int *sources;
    int nsources;
    const int *sinks;
    int nsinks;
    /* Chooses each record's sink; NULL: river_pick_hash over the whole
     * record. river_pick_range's and river_pick_hash's arguments are checked
     * at open (splitters ascending, key inside the record). */
    river_pick_fn pick;
    void *pick_arg;
    /* First libmsg tag of the river's RIVER_TAGS (RIVER_TAG_DEFAULT). */
    int tag;
    /* river_open and river_close give up on a peer that has sent nothing for
     * this long, ms (0: 60000). Put and get wait as long as the peers live:
     * a slow sink is flow control, a failed one an error. */
    int timeout_ms;
    /* Sink-provided memory (see river_place_fn); NULL: batches land in the
     * river's own buffers (nsources x credits batches per sink). */
    river_place_fn place;
    void *place_arg;
} river_options_t;

/* Every rank of the river must open it with the same record_size,
 * batch_size, credits, sources, sinks and tag (river_open fails with
 * RIVER_ERR_MISMATCH otherwise). */
void river_options_init(river_options_t *options);

typedef struct river river_t;

/* Collective over the river's sources and sinks: returns once every sink has
 * granted this source its credits and every source has greeted this sink. A
 * rank that is neither gets a handle that does nothing. Thread safe
 * afterwards: one thread may put while another gets (a rank that is both a
 * source and a sink must: two such ranks each blocked in put, waiting for the
 * other to get, would wait for good). */
int river_open(msg_context_t *msg, const river_options_t *options, river_t **river);

/* Orderly end of the handle, then frees it. A source that has not ended
 * aborts its flow (its sinks get RIVER_ERR_SOURCE_ABORTED); a sink whose flow
 * has not ended tells its sources (RIVER_ERR_SINK_CLOSED) and takes what they
 * already sent. Waits for every peer's last word, each wait bounded by
 * timeout_ms of silence. Returns the river's first error, RIVER_ERR_TIMEOUT,
 * or RIVER_OK. No other call on the handle may be in progress. */
int river_close(river_t *river);

/* This rank's source and sink indexes (-1: not one); either may be NULL. */
int river_role(const river_t *river, int *source_index, int *sink_index);

/* ---- sources ----
 * Records are copied into the batch being filled for their sink; a full
 * batch is sent as soon as the sink has granted a credit. A source holds at
 * most credits + 1 batches per sink (credits in flight, one being filled):
 * when the batch being filled is full and no credit is left, put waits for
 * the sink. Records of one source reach each sink in the order put. */
int river_put(river_t *river, const void *record);
/* As river_put, but returns RIVER_ERR_WOULD_BLOCK, taking nothing, where
 * river_put would wait. */
int river_try_put(river_t *river, const void *record);
/* count records, each to the sink the pick function chooses. */
int river_put_records(river_t *river, const void *records, size_t count);
/* count records, all to sink `sink` (an index), without the pick function. */
int river_put_to(river_t *river, int sink, const void *records, size_t count);
/* Sends every partly filled batch now (waiting for credits). */
int river_flush(river_t *river);
/* End of this source's flow: flushes, then tells every sink how many batches
 * and records to expect. Later puts return RIVER_ERR_ENDED. */
int river_end(river_t *river);

/* ---- sinks ---- */
/* A batch handed to the application: records from one source, in the order
 * that source put them, starting on a 4096-byte boundary. Valid until
 * river_release; the last field is the river's. */
typedef struct river_batch {
    const void *records;
    size_t count;
    int source; /* the source's rank */
    uint64_t slot;
} river_batch_t;

/* Next batch, from the sources in turn. Waits up to timeout_ms (-1: as long
 * as it takes; 0: just look). Returns RIVER_OK, RIVER_END once every source
 * has ended and every batch was got, RIVER_ERR_WOULD_BLOCK if nothing came in
 * time, or an error. Release every batch: a source waits for its credits. */
int river_get_batch(river_t *river, river_batch_t *batch, int timeout_ms);
/* Gives the batch's buffer back to the river and its credit to the source.
 * A source that has failed meanwhile does not make it fail: the batch is
 * released, and the next river_get_batch or river_get reports the failure. */
int river_release(river_t *river, river_batch_t *batch);
/* Next record copied into `record` (record_size bytes): RIVER_OK, RIVER_END
 * or an error. Waits as long as it takes. */
int river_get(river_t *river, void *record);

/* ---- statistics and errors ---- */
typedef struct river_stats {
    uint64_t records_put, bytes_put; /* taken by put */
    uint64_t batches_sent;
    uint64_t records_got, bytes_got; /* handed to the application */
    uint64_t batches_received;
    /* Puts (and flushes, ends) that found no credit or free batch and waited,
     * or returned RIVER_ERR_WOULD_BLOCK, and the time spent waiting, ns. */
    uint64_t credit_waits;
    uint64_t blocked_ns;
    /* Most batches sent to one sink and not yet granted back, at one time:
     * never more than credits. */
    uint64_t peak_in_flight;
    /* Most bytes of batch buffers this source held at one time, and the
     * bound the design sets on it: nsinks x (credits + 1) x batch bytes. */
    uint64_t peak_source_bytes;
    uint64_t source_bytes_bound;
    /* Most batches arrived at this sink and not yet released, at one time
     * (at most nsources x credits), and the sink's receive buffers in bytes
     * (nsources x credits x batch bytes). */
    uint64_t peak_sink_batches;
    uint64_t sink_bytes;
    /* Batches and control messages from peers rejected by validation. */
    uint64_t bad_batches;
    uint64_t bad_messages;
} river_stats_t;

int river_get_stats(const river_t *river, river_stats_t *stats);

/* The river's first error (RIVER_OK if none), with the rank it concerns
 * (-1 if none) and a sentence naming it ("sink rank 3 failed", "batch from
 * source rank 1: record count out of range"); rank and text may be NULL. */
int river_error(const river_t *river, int *rank, char *text, size_t text_capacity);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* RIVER_RIVER_H */
