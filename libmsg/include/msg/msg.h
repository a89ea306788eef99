/* libmsg: thread-safe send/receive messaging over RDMA/VIA-style fabrics.
 * The whole public API: opaque handles, negative status codes, msg_strerror.
 *
 * Growth: handles are opaque; functions are only added. msg_completion_t
 * keeps its layout (programs keep arrays of it): new facts go into fields it
 * has (a receive's sender size went into data). msg_config_t, msg_info_t and
 * msg_stats_t carry no size field and grow only at their end; the library
 * fills or reads them whole, so while the major version is 0 a program must
 * be built against the msg.h of the library it runs with (tests/abi compares
 * each build's ABI with the last release's and names any such change).
 * Added in 0.2: msg_probe, msg_iprobe, msg_cq_get_fd, msg_set_log_handler,
 * msg_set_log_level, msg_isend_flags, msg_irecv_flags, the reserved tags
 * (MSG_ERR_RESERVED_TAG), a receive's sender size in data, log_level in
 * msg_config_t and msg_info_t.
 * Added in 0.3: active_peers in msg_config_t; active_peers, receive_buffers
 * and receive_bytes in msg_info_t; receive_grants and receive_reclaims in
 * msg_stats_t; msg_receive_memory.
 * Added in 0.4: MSG_PROTOCOL_AUTO (the new default), msg_protocol_name,
 * msg_get_protocol_table.
 * Added after 0.4 (unreleased): the collectives (msg_bcast, msg_reduce,
 * msg_allreduce, msg_gather, msg_allgather, msg_scatter, msg_alltoall,
 * msg_alltoallv and their msg_i forms), msg_reduction_create,
 * msg_reduction_free, enum msg_datatype, enum msg_reduction,
 * MSG_OP_COLLECTIVE, MSG_TAG_COLLECTIVE_FIRST. */
#ifndef MSG_MSG_H
#define MSG_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "msg/version.h" /* MSG_VERSION_MAJOR, MSG_VERSION_MINOR, MSG_VERSION_PATCH */

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes: 0 is success, every error is negative ---- */
enum msg_status {
    MSG_OK = 0,
    MSG_ERR_INVALID_ARG = -1, /* NULL handle, negative length, bad option */
    MSG_ERR_NO_MEMORY = -2,
    MSG_ERR_TRUNCATED = -3,    /* receive buffer smaller than the message */
    MSG_ERR_TIMEOUT = -4,      /* msg_cq_wait timed out; nothing completed */
    MSG_ERR_PEER_FAILED = -5,  /* the peer exited or was killed */
    MSG_ERR_UNKNOWN_RANK = -6, /* rank outside [0, size) */
    MSG_ERR_FINALIZED = -7,    /* the context was finalized */
    MSG_ERR_TRANSPORT = -8,    /* the fabric reported an error */
    MSG_ERR_BOOTSTRAP = -9,    /* job start-up / rendezvous failed */
    MSG_ERR_PROTOCOL = -10,    /* a malformed or unexpected protocol header */
    MSG_ERR_BUSY = -11,        /* object still has operations in flight */
    MSG_ERR_NOT_SUPPORTED = -12,
    MSG_ERR_CONFIG = -13,      /* an option or VIADUCT_* variable is invalid */
    MSG_ERR_CANCELED = -14,    /* a receive withdrawn by msg_cq_cancel_recvs */
    MSG_ERR_RESERVED_TAG = -15 /* a tag in [MSG_TAG_RESERVED_FIRST, MSG_TAG_MAX] */
};

/* Readable text for a status code; never NULL. */
const char *msg_strerror(int status);

/* The loaded library's version (the MSG_VERSION_* macros are the version compiled
 * against). MSG_ERR_INVALID_ARG if a pointer is NULL. */
int msg_get_version(int *major, int *minor, int *patch);

/* ---- diagnostics (process-wide) ---- */
enum msg_log_level {
    MSG_LOG_ERROR = 1, /* an operation or msg_init fails, and why */
    MSG_LOG_WARN = 2,  /* something degraded but working (the default level) */
    MSG_LOG_INFO = 3,
    MSG_LOG_DEBUG = 4 /* protocol and connection details */
};

/* Receives each diagnostic line of level <= the current level: its
 * msg_log_level and the text (no rank prefix, no newline; valid only during
 * the call). It runs on whichever thread logs, possibly holding libmsg's
 * internal locks, so it must not call libmsg. */
typedef void (*msg_log_fn)(void *arg, int level, const char *message);

/* Installs fn (NULL: back to stderr, where lines read "libmsg[RANK] LEVEL:
 * text", or "libmsg LEVEL: text" before the rank is known). Install or
 * remove it while no other thread is inside libmsg: a line being logged
 * meanwhile may still reach the previous handler. */
int msg_set_log_handler(msg_log_fn fn, void *arg);

/* Sets the level at once (msg_init sets it again from its configuration).
 * MSG_ERR_INVALID_ARG outside [MSG_LOG_ERROR, MSG_LOG_DEBUG]. */
int msg_set_log_level(int level);

/* ---- wildcards and limits ---- */
#define MSG_ANY_SOURCE (-1)
#define MSG_ANY_TAG (-1)
/* Tags given to send must be in [0, MSG_TAG_MAX]. */
#define MSG_TAG_MAX 0x7fffffff
/* Tags from MSG_TAG_RESERVED_FIRST to MSG_TAG_MAX belong to the layers built
 * into this package (libremoteio: RIO_TAG_FIRST is MSG_TAG_RESERVED_FIRST),
 * so they can share a context with the application. The application's own
 * tags are [0, MSG_TAG_USER_MAX] (river's RIVER_TAG_DEFAULT among them): a
 * send, receive or probe naming a reserved tag returns MSG_ERR_RESERVED_TAG,
 * and its MSG_ANY_TAG receives and probes never match a reserved tag. */
#define MSG_TAG_RESERVED_FIRST 0x40000000
#define MSG_TAG_USER_MAX (MSG_TAG_RESERVED_FIRST - 1)
/* The reserved range is shared out: libremoteio takes
 * [MSG_TAG_RESERVED_FIRST, MSG_TAG_COLLECTIVE_FIRST - 1], the collectives
 * (msg_bcast and the others) [MSG_TAG_COLLECTIVE_FIRST, MSG_TAG_MAX], one tag
 * per collective: MSG_TAG_COLLECTIVE_FIRST plus the context's collective
 * sequence number modulo 2^29. */
#define MSG_TAG_COLLECTIVE_FIRST 0x60000000

/* ---- configuration (every field can be overridden by a VIADUCT_* variable) ---- */
/* Every long message starts with a request to send (RTS) and moves only once
 * a receive has matched it. With an RDMA protocol on a fabric without that
 * RDMA operation, long messages go by send/recv. */
enum msg_long_protocol {
    MSG_PROTOCOL_SENDRECV = 0,   /* chunks through pre-posted receive buffers */
    MSG_PROTOCOL_RDMA = 1,       /* RTS carries the sender's buffer; the receiver
                                    RDMA-reads it, then sends a finish (on one
                                    host, unrestricted, from 16 KiB, the sender
                                    copies the second half meanwhile) */
    MSG_PROTOCOL_RDMA_WRITE = 2, /* the receiver's clear to send carries its buffer;
                                    the sender RDMA-writes it, then sends a finish */
    MSG_PROTOCOL_AUTO = 3        /* the default: one of the three per message, by
                                    its size, from the fabric's table for the mode
                                    (msg_get_protocol_table) */
};

typedef struct msg_config {
    /* libfabric provider, e.g. "shm", "tcp;ofi_rxm", "verbs;ofi_rxm".
     * NULL: shm when all ranks share a host, else tcp;ofi_rxm.
     * VIADUCT_PROVIDER */
    const char *provider;
    /* Long-message protocol. VIADUCT_PROTOCOL=auto|sendrecv|rdma|rdma-write */
    int long_protocol;
    /* Nonzero: one long send and one long receive active per process.
     * VIADUCT_RESTRICTED=0|1 */
    int restricted;
    /* Largest message sent eagerly, bytes. VIADUCT_EAGER_MAX */
    size_t eager_max;
    /* Size of each pre-posted receive buffer (and of a send/recv chunk).
     * VIADUCT_BUFFER_SIZE */
    size_t buffer_size;
    /* Receive buffers a sender may fill at one peer before it must wait for
     * credit to come back. VIADUCT_CREDITS */
    int credits;
    /* Time allowed to join the job and to connect every peer, and the
     * bound on noticing that a peer's host vanished (TCP keep-alive on the
     * coordinator link), ms. A peer process that exits or is killed is
     * noticed at once. VIADUCT_TIMEOUT_MS */
    int timeout_ms;
    /* How long a waiting thread polls before it sleeps, microseconds, or
     * MSG_SPIN_AUTO (the default, 200). Where more of the job's ranks may
     * run on this rank's CPUs than there are CPUs between them, the poller
     * yields the CPU between polls (the thread it waits for may need that
     * core); ranks bound one to a CPU do not. VIADUCT_SPIN_US (a number or
     * "auto") */
    int spin_us;
    /* Transport: "auto" (the default: "shm" when every rank of the job runs
     * on this host and no provider is named, else "ofi"), "ofi" (libfabric),
     * "verbs" (rdma-core RC queue pairs; only in a libmsg built with
     * rdma-core) or "shm" (libmsg's own shared-memory rings and cross-memory
     * copies; every rank on one host). NULL or "": auto. msg_info_t's
     * transport names the one opened. VIADUCT_TRANSPORT */
    const char *transport;
    /* How to join the job: "auto" (the default: the first of tcp, pmix and
     * single that the environment describes), "tcp", "pmix" or "single".
     * NULL or "": auto. VIADUCT_BOOTSTRAP */
    const char *bootstrap;
    /* The silence after which the other end of a coordinator link counts as
     * gone, ms (at least 100; heartbeats go every quarter of it); 0, the
     * default: the larger of timeout_ms and 10 s. VIADUCT_HEARTBEAT_MS */
    int heartbeat_ms;
    /* What one peer's unexpected messages (arrived before a matching
     * receive) may hold here before that peer's credit is held back until
     * the application receives: eager payload bytes (default 1 MiB) and
     * messages (default 1024), each at least 1.
     * VIADUCT_UNEXPECTED_BYTES, VIADUCT_UNEXPECTED_COUNT */
    size_t unexpected_bytes;
    size_t unexpected_count;
    /* ofi on shm: nonzero (the default) lets long messages move by
     * cross-memory copies (process_vm_readv/writev) instead of the
     * provider's RDMA. VIADUCT_SHM_CMA=0 turns them off (any other value
     * leaves them on). */
    int shm_cma;
    /* verbs: the RDMA device (e.g. "rxe0", "mlx5_0") and the IPv4 address to
     * listen on; NULL: the first device with an IPv4 address.
     * VIADUCT_VERBS_DEVICE, VIADUCT_VERBS_ADDR */
    const char *verbs_device;
    const char *verbs_addr;
    /* verbs: long messages' registrations kept for reuse: at most this many
     * (default 64; 0 keeps none) and this many bytes (default 1 GiB).
     * VIADUCT_VERBS_MR_CACHE, VIADUCT_VERBS_MR_CACHE_BYTES */
    size_t verbs_mr_cache;
    size_t verbs_mr_cache_bytes;
    /* Nonzero: debug lines on stderr. Process-wide: msg_init turns them on
     * or off for the whole process. VIADUCT_DEBUG (unset or 0: off; any
     * other value: on, as log_level MSG_LOG_DEBUG) */
    int debug;
    /* The most detailed diagnostics shown (enum msg_log_level; 0: the
     * default, MSG_LOG_WARN). Process-wide, set by msg_init; debug != 0
     * raises it to MSG_LOG_DEBUG. VIADUCT_LOG_LEVEL=error|warn|info|debug */
    int log_level;
    /* Nonzero-length: record every completed send and receive and write them
     * at msg_finalize to this file, "%r" replaced by the rank (without "%r",
     * ".RANK" is appended): CSV lines of rank, kind, peer, tag, bytes,
     * protocol, post and completion time (CLOCK_MONOTONIC ns), status.
     * NULL or "": no trace (the default). VIADUCT_TRACE */
    const char *trace;
    /* Records a trace keeps (default 1000000, at least 1); later ones are
     * only counted, in the file's last line. VIADUCT_TRACE_RECORDS */
    size_t trace_records;
    /* How many peers may send to a rank with their whole `credits` at once
     * (0: the default, 16); every rank must use the same. In a job of more
     * ranks than this + 1 the receive buffers are shared (docs/libmsg.md,
     * Receive memory): every peer may fill two, plus two for credit returns,
     * and the peers that send get more, up to `credits` each, from a pool of
     * active_peers * (credits - 2). Memory then grows with the peers that
     * send, not with the job: see msg_receive_memory. VIADUCT_ACTIVE_PEERS */
    int active_peers;
} msg_config_t;

#define MSG_SPIN_AUTO (-1)

/* Fills *config with the defaults, then applies VIADUCT_* variables.
 * Returns MSG_ERR_CONFIG (and keeps the default) for a variable it cannot
 * parse. The string fields then point into the environment. Besides these
 * settings libmsg reads only what describes the job (see msg_init). */
int msg_config_init(msg_config_t *config);

/* ---- context ---- */
typedef struct msg_context msg_context_t;

/* Joins the job described by the environment (msgrun, or VIADUCT_COORDINATOR
 * with VIADUCT_RANK, VIADUCT_SIZE and the job's key in VIADUCT_JOB_KEY or
 * VIADUCT_JOB_KEY_FILE; a coordinator admits only holders of the key), opens
 * the fabric and connects every
 * peer before returning. With no job environment the process is a job of one.
 * config may be NULL (defaults plus environment). */
int msg_init(const msg_config_t *config, msg_context_t **context);

/* Orderly shutdown: waits for this rank's sends to finish, then for every
 * live rank to reach finalize (a failed rank is not waited for). Sends that
 * see no fabric activity at all for timeout_ms are abandoned
 * (MSG_ERR_TIMEOUT). Receives still posted complete with MSG_ERR_FINALIZED.
 * Afterwards every call on the context returns MSG_ERR_FINALIZED until
 * msg_destroy. If a fabric call has been stuck for timeout_ms (a provider
 * wedged by a failed peer), calls return MSG_ERR_TRANSPORT instead of
 * blocking. Its closing barrier ends as msg_barrier's does: with
 * MSG_ERR_PEER_FAILED if a rank fails or stops meanwhile. */
int msg_finalize(msg_context_t *context);

/* Releases the handle (finalizing first if needed). */
void msg_destroy(msg_context_t *context);

int msg_rank(const msg_context_t *context, int *rank);
int msg_size(const msg_context_t *context, int *size);

typedef struct msg_info {
    int rank;
    int size;
    char provider[64]; /* libfabric provider in use ("self" in a job of one) */
    int long_protocol; /* enum msg_long_protocol */
    int restricted;
    size_t eager_max;
    size_t buffer_size;
    /* Connecting: exchanging fabric addresses through the bootstrap,
     * filling the address vector and a handshake with every peer. */
    double connect_seconds;
    /* The whole of msg_init: joining the job, opening the fabric (libfabric's
     * own initialization included) and connecting. */
    double init_seconds;
    /* How long a blocking call waits for a peer before reporting it failed
     * (msg_config_t.timeout_ms as this context uses it). */
    int timeout_ms;
    /* The other settings as this context uses them (msg_config_t). */
    char transport[16]; /* "ofi", "verbs" or "shm"; "self" in a job of one, which opens none */
    char bootstrap[16]; /* how the job was joined: "tcp", "pmix" or "single" */
    int credits;
    int spin_us;      /* MSG_SPIN_AUTO resolved */
    int spin_yield;   /* nonzero: more ranks than CPUs share this one's, waiters yield */
    int heartbeat_ms; /* the coordinator link's period, 0 resolved */
    size_t unexpected_bytes;
    size_t unexpected_count;
    int shm_cma;
    size_t verbs_mr_cache;
    size_t verbs_mr_cache_bytes;
    int debug;
    int log_level;    /* enum msg_log_level in effect (0 resolved) */
    int active_peers; /* 0 resolved */
    /* The receive buffers this rank allocated (posted, or kept to grant to
     * the peers that send), and their bytes: msg_receive_memory's figure. */
    size_t receive_buffers;
    size_t receive_bytes;
} msg_info_t;

int msg_get_info(const msg_context_t *context, msg_info_t *info);

/* A protocol's name as VIADUCT_PROTOCOL takes it ("sendrecv", "rdma",
 * "rdma-write", "auto"), or NULL for a value that is none. */
const char *msg_protocol_name(int protocol);

/* The protocol table in force: messages longer than eager_max and at most
 * max_bytes (and longer than the previous range's) go by `protocol`; the last
 * range's max_bytes is SIZE_MAX. One range when a protocol was configured;
 * under MSG_PROTOCOL_AUTO, the table msg-tune(1) measured for this host,
 * fabric and mode when the tuning file (VIADUCT_TUNING) has one, else the
 * fabric's built-in table for the mode. A protocol the
 * fabric lacks (RDMA on tcp without it) still moves by send/recv. */
typedef struct msg_protocol_range {
    size_t max_bytes;
    int protocol; /* MSG_PROTOCOL_SENDRECV, _RDMA or _RDMA_WRITE */
} msg_protocol_range_t;

/* Copies up to `max` ranges into ranges (may be NULL when max is 0) and sets
 * *count to how many the table has. */
int msg_get_protocol_table(const msg_context_t *context, msg_protocol_range_t *ranges, size_t max,
                           size_t *count);

/* The receive buffers one rank of a job of `size` ranks allocates with
 * *config (NULL: msg_config_init's), in bytes: (size - 1) * (credits + 2)
 * buffers of buffer_size bytes while size - 1 <= active_peers; beyond,
 * (size - 1) * 4 (two a peer may fill and two for its credit returns) plus
 * the pool, active_peers * (credits - 2) (a fabric whose receive queue is
 * shorter allocates fewer). msg_init refuses
 * with MSG_ERR_NO_MEMORY, before it connects, when this is more than the host
 * has available (MemAvailable) or the process may have (RLIMIT_DATA).
 * *buffers (may be NULL) gets the count. MSG_ERR_CONFIG for a bad config,
 * MSG_ERR_INVALID_ARG for size < 1. */
int msg_receive_memory(const msg_config_t *config, int size, size_t *bytes, size_t *buffers);

typedef struct msg_stats {
    uint64_t messages_sent;
    uint64_t messages_received;
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t bad_headers; /* incoming headers rejected by validation */
    uint64_t peers_failed;
    /* Memory registrations the transport made (its own buffers and long
     * messages' buffers), and how many times a kept registration served a
     * long message instead (native verbs' registration cache). */
    uint64_t memory_registrations;
    uint64_t registrations_reused;
    /* Messages (eager, or a long message's request to send; sends to self
     * included) counted once, when they arrive: unexpected if no posted
     * receive matched them (they wait until one is posted), expected if a
     * posted receive took them at once. */
    uint64_t unexpected_messages;
    uint64_t expected_messages;
    /* Long messages to and from other ranks completed (MSG_OK or
     * MSG_ERR_TRUNCATED), by the protocol that moved their data: chunks
     * (MSG_PROTOCOL_SENDRECV, also where RDMA was configured but not
     * available), RDMA read, RDMA write. */
    uint64_t long_sent_sendrecv;
    uint64_t long_received_sendrecv;
    uint64_t long_sent_rdma_read;
    uint64_t long_received_rdma_read;
    uint64_t long_sent_rdma_write;
    uint64_t long_received_rdma_write;
    /* Receive buffers granted from the shared pool to a peer that was
     * sending, and taken back from one with more than its first two when
     * another peer waited for them. */
    uint64_t receive_grants;
    uint64_t receive_reclaims;
} msg_stats_t;

int msg_get_stats(const msg_context_t *context, msg_stats_t *stats);

/* ---- completion queues ---- */
typedef struct msg_cq msg_cq_t;

enum msg_op {
    MSG_OP_SEND = 1,
    MSG_OP_RECV = 2,
    MSG_OP_USER = 3,      /* posted with msg_cq_post */
    MSG_OP_COLLECTIVE = 4 /* a nonblocking collective (msg_ibcast and the others) */
};

typedef struct msg_completion {
    int op;     /* enum msg_op (a posted entry keeps its own value) */
    int status; /* MSG_OK or an error */
    int source; /* receive: the sender; send: the destination */
    int tag;
    /* receive: bytes delivered into the buffer; send: bytes sent (a long
     * message whose receive was smaller: the bytes the receiver accepted;
     * an eager one: its whole size, the sender never learns of truncation) */
    size_t bytes;
    void *cookie; /* the caller's cookie from isend/irecv/post */
    /* receive: the sender's message size (with MSG_ERR_TRUNCATED larger than
     * bytes; 0 for a receive no message matched); msg_cq_post: the poster's
     * own; 0 otherwise */
    uint64_t data;
} msg_completion_t;

int msg_cq_create(msg_context_t *context, msg_cq_t **cq);
/* A CQ that queues nothing: each completion of an operation bound to it is
 * handed to fn(arg, completion) by whichever thread moves libmsg forward
 * (its progress thread, or one waiting or issuing), while libmsg's internal
 * lock is held. fn must be short and must not call libmsg, except
 * msg_cq_post on other CQs. For layers built on libmsg that finish their own
 * bookkeeping without a thread hop. msg_cq_post on it calls fn directly;
 * msg_cq_wait on it is MSG_ERR_INVALID_ARG. */
typedef void (*msg_cq_callback_fn)(void *arg, const struct msg_completion *completion);
int msg_cq_create_callback(msg_context_t *context, msg_cq_callback_fn fn, void *arg, msg_cq_t **cq);

/* MSG_ERR_BUSY while operations bound to the CQ are still in flight. */
int msg_cq_destroy(msg_cq_t *cq);

/* Blocks until one completion is available or timeout_ms passes
 * (timeout_ms < 0: no limit; 0: just look). Several threads may wait on one
 * CQ; each completion goes to exactly one of them. Waiting does not spin a
 * core beyond spin_us. */
int msg_cq_wait(msg_cq_t *cq, int timeout_ms, msg_completion_t *completion);

/* A file descriptor (an eventfd) that is readable exactly while the CQ holds
 * completions, for poll, select or epoll (level- or edge-triggered) beside
 * the application's own descriptors. Completions arrive without the
 * application calling libmsg (the progress thread moves the fabric); take
 * them with msg_cq_wait(cq, 0, ...) until MSG_ERR_TIMEOUT. Never read,
 * write or close it: it belongs to the CQ and is closed by msg_cq_destroy.
 * The same descriptor every call. MSG_ERR_INVALID_ARG for a callback CQ. */
int msg_cq_get_fd(msg_cq_t *cq, int *fd);

/* Appends an entry of the caller's making; a waiter receives it as is. */
int msg_cq_post(msg_cq_t *cq, const msg_completion_t *entry);

/* Withdraws every receive bound to cq that no message has matched yet; each
 * completes on cq with MSG_ERR_CANCELED. Receives already taking data are
 * left to finish. *canceled (may be NULL) gets the number withdrawn. */
int msg_cq_cancel_recvs(msg_cq_t *cq, size_t *canceled);

/* ---- messaging ---- */
/* Asynchronous: the result arrives on cq as one completion carrying cookie.
 * The buffer must stay valid and untouched until then. */
int msg_isend(msg_context_t *context, int dest, int tag, const void *buf, size_t len, msg_cq_t *cq,
              void *cookie);
int msg_irecv(msg_context_t *context, int source, int tag, void *buf, size_t capacity, msg_cq_t *cq,
              void *cookie);

/* msg_isend / msg_irecv with flags (MSG_FLAG_*; 0: the same calls). */
/* The reserved tags are allowed, and an MSG_ANY_TAG receive matches them
 * too: only for the layers the reserved range belongs to. */
#define MSG_FLAG_RESERVED_TAG 0x1u
int msg_isend_flags(msg_context_t *context, int dest, int tag, const void *buf, size_t len,
                    msg_cq_t *cq, void *cookie, unsigned flags);
int msg_irecv_flags(msg_context_t *context, int source, int tag, void *buf, size_t capacity,
                    msg_cq_t *cq, void *cookie, unsigned flags);

/* Blocking forms. msg_recv fills *completion (may be NULL) with the source,
 * tag and byte count. */
int msg_send(msg_context_t *context, int dest, int tag, const void *buf, size_t len);
int msg_recv(msg_context_t *context, int source, int tag, void *buf, size_t capacity,
             msg_completion_t *completion);

/* Probing: the first unexpected message (arrived, not yet received) that
 * msg_irecv(source, tag) would take, left where it is. Wildcards as for
 * msg_irecv. On success *completion holds op MSG_OP_RECV, status MSG_OK, the
 * message's source and tag, and its size in bytes (also in data); a receive
 * posted next with that source and tag takes that very message (unless
 * another thread receives it first). Eager and long messages alike: a long
 * message is probed by its request to send, before any of its data moves.
 * msg_iprobe looks once: MSG_OK with *flag 1 (found) or 0 (nothing yet).
 * msg_probe blocks as msg_cq_wait does (timeout_ms < 0: no limit; 0: just
 * look) and returns MSG_ERR_TIMEOUT when nothing matched in time. Both return
 * MSG_ERR_PEER_FAILED when no such message can come any more (the source
 * failed, or for MSG_ANY_SOURCE every other rank did). */
int msg_iprobe(msg_context_t *context, int source, int tag, int *flag,
               msg_completion_t *completion);
int msg_probe(msg_context_t *context, int source, int tag, int timeout_ms,
              msg_completion_t *completion);

/* ---- collectives (over every rank of the context) ---- */
/* Ordering: every rank must start the context's collectives in the same order
 * (as MPI requires); each one takes the next tag of the collective range, so
 * successive collectives never match each other's messages, and none matches
 * an application receive. One thread at a time may start collectives on a
 * context (point-to-point traffic from other threads meanwhile is fine).
 * A call refused for a bad argument starts nothing and takes no tag.
 *
 * Each call has a blocking form and a nonblocking one (msg_i...) that
 * completes on cq as one completion: op MSG_OP_COLLECTIVE, the status, source
 * the root (MSG_ANY_SOURCE for the calls without one), tag 0, bytes the bytes
 * written to this rank's receive buffer, cookie, and data the collective's
 * sequence number. Buffers must stay valid and untouched until then; a send
 * buffer may be the receive buffer (in place) where both have one size.
 *
 * Failures: once any rank is known to have failed (the job's coordinator
 * tells every survivor), every open collective completes with
 * MSG_ERR_PEER_FAILED on every survivor, and one started later is refused
 * with MSG_ERR_PEER_FAILED at once. A rank whose own part finished before the
 * failure may complete with MSG_OK: its result is whole. The receive buffer of
 * a failed collective holds no defined content. */

/* Element types and reductions of msg_reduce and msg_allreduce. */
enum msg_datatype {
    MSG_INT32 = 1,
    MSG_INT64 = 2,
    MSG_UINT32 = 3,
    MSG_UINT64 = 4,
    MSG_FLOAT = 5,
    MSG_DOUBLE = 6
};
enum msg_reduction {
    MSG_SUM = 1,
    MSG_MIN = 2,
    MSG_MAX = 3,
    MSG_BAND = 4, /* bitwise and: integer types only (else MSG_ERR_INVALID_ARG) */
    MSG_BOR = 5   /* bitwise or: integer types only */
};
/* A reduction of the caller's: combines count elements of in into inout
 * (inout[i] = in[i] op inout[i]). It must be associative and commutative
 * (ranks combine in different orders), must not call libmsg (it runs holding
 * libmsg's internal lock, on whichever thread moves libmsg forward) and is
 * given the arg passed to msg_reduction_create. */
typedef void (*msg_reduce_fn)(const void *in, void *inout, size_t count, void *arg);
/* Registers fn as a reduction of this context: *op gets a code to pass as
 * msg_reduce's and msg_allreduce's op (every rank must register its own in
 * the same order to get the same code). msg_reduction_free releases the code;
 * collectives already started keep fn. */
int msg_reduction_create(msg_context_t *context, msg_reduce_fn fn, void *arg, int *op);
int msg_reduction_free(msg_context_t *context, int op);

/* root's buf (bytes) reaches every rank's buf. */
int msg_bcast(msg_context_t *context, void *buf, size_t bytes, int root);
int msg_ibcast(msg_context_t *context, void *buf, size_t bytes, int root, msg_cq_t *cq,
               void *cookie);
/* The reduction of every rank's sendbuf (count elements of datatype) into
 * root's recvbuf (ignored elsewhere, may be NULL). */
int msg_reduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
               int datatype, int op, int root);
int msg_ireduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
                int datatype, int op, int root, msg_cq_t *cq, void *cookie);
/* The same reduction into every rank's recvbuf (the same bits on every rank). */
int msg_allreduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
                  int datatype, int op);
int msg_iallreduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
                   int datatype, int op, msg_cq_t *cq, void *cookie);
/* Every rank's sendbuf (bytes) into root's recvbuf (size * bytes, by rank;
 * ignored elsewhere, may be NULL). */
int msg_gather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf, int root);
int msg_igather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf, int root,
                msg_cq_t *cq, void *cookie);
/* Every rank's sendbuf (bytes) into every rank's recvbuf (size * bytes). */
int msg_allgather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf);
int msg_iallgather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf,
                   msg_cq_t *cq, void *cookie);
/* root's sendbuf (size * bytes; ignored elsewhere, may be NULL) dealt out:
 * rank r's recvbuf (bytes) gets block r. */
int msg_scatter(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf, int root);
int msg_iscatter(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf, int root,
                 msg_cq_t *cq, void *cookie);
/* Block j of sendbuf (bytes each, size blocks) goes to rank j, which puts it
 * at block r (this rank) of its recvbuf. */
int msg_alltoall(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf);
int msg_ialltoall(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf,
                  msg_cq_t *cq, void *cookie);
/* alltoall with a size per peer: sendcounts[j] bytes from sendbuf +
 * sdispls[j] go to rank j, recvcounts[j] bytes from rank j land at recvbuf +
 * rdispls[j] (arrays of size entries). recvcounts[j] must be rank j's
 * sendcounts[r]: a larger message completes the call with MSG_ERR_TRUNCATED. */
int msg_alltoallv(msg_context_t *context, const void *sendbuf, const size_t *sendcounts,
                  const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                  const size_t *rdispls);
int msg_ialltoallv(msg_context_t *context, const void *sendbuf, const size_t *sendcounts,
                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                   const size_t *rdispls, msg_cq_t *cq, void *cookie);

/* Blocks until every live rank has called it (through the job's bootstrap).
 * MSG_ERR_PEER_FAILED if a rank failed (exited, was killed, or stopped
 * answering the coordinator's heartbeat) while it waited; MSG_ERR_BOOTSTRAP,
 * with the cause logged, if the coordinator itself stopped answering. */
int msg_barrier(msg_context_t *context);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* MSG_MSG_H */
