/* libremoteio: requests and replies (command + data) between thread endpoints
 * of a libmsg job, a shadow thread per process that dispatches them, and
 * remote I/O on exported files. Built on libmsg only. */
#ifndef RIO_RIO_H
#define RIO_RIO_H

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
 * 0 is success. libmsg's codes (-1 .. -99) pass through unchanged, e.g.
 * MSG_ERR_PEER_FAILED for a request to a dead peer. libremoteio's own are
 * -100 and below. A reply's status is whatever the replier chose; keep
 * application statuses >= 0 so they never collide with these. */
enum rio_status {
    RIO_OK = 0,
    RIO_ERR_BAD_HANDLE = -100,  /* unknown or withdrawn export handle */
    RIO_ERR_RANGE = -101,       /* outside the exported byte range */
    RIO_ERR_READ_ONLY = -102,   /* write to a read-only export */
    RIO_ERR_IO = -103,          /* the server's local I/O failed (EIO, short file) */
    RIO_ERR_BAD_REQUEST = -104, /* malformed request */
    RIO_ERR_NO_HANDLER = -105,  /* no handler for this command at the target */
    RIO_ERR_SHUTDOWN = -106,    /* the target is shutting down */
    RIO_ERR_TOO_LARGE = -107,   /* request or transfer larger than the server allows */
    RIO_ERR_TIMEOUT = -108,     /* finalize gave up waiting for requests or for a rank */
    RIO_ERR_PEER_MEMORY = -109  /* the requester already has as much request data held at the
                                   target as it allows (rio_options_t.peer_memory) */
};

/* Readable text for a libremoteio or libmsg status; never NULL. */
const char *rio_strerror(int status);

/* ---- endpoints and operations ---- */
enum rio_target {
    RIO_TARGET_WORKER = 0, /* the process's sorting (application) thread */
    RIO_TARGET_SHADOW = 1  /* the process's shadow thread */
};

/* Application command codes are below RIO_CMD_RESERVED; the codes above are
 * libremoteio's own remote I/O commands. */
#define RIO_CMD_RESERVED 0xffff0000u

/* Completion `op` values (libmsg's are 1..3). */
enum rio_op {
    RIO_OP_REPLY = 16,  /* a request of ours finished: status, bytes, source, tag = command */
    RIO_OP_REQUEST = 17 /* an IPC request for the worker: cookie is a rio_incoming_t * */
};

/* libremoteio uses libmsg's reserved tags, RIO_TAG_FIRST
 * (MSG_TAG_RESERVED_FIRST) and above, on the shared context. libmsg refuses
 * them to the application (MSG_ERR_RESERVED_TAG) and keeps them from its
 * MSG_ANY_TAG receives, so the application's own messages on the same
 * context cannot be confused with libremoteio's. */
#define RIO_TAG_FIRST 0x40000000

typedef struct rio rio_t;
typedef struct rio_incoming rio_incoming_t;

typedef struct rio_options {
    int header_receives;     /* request receives kept posted by the shadow thread (64) */
    int io_depth;            /* file reads/writes in flight at once (16) */
    size_t io_memory;        /* bytes of server-side I/O buffers in flight (256 MiB) */
    size_t max_transfer;     /* largest read, write or request data accepted (256 MiB) */
    int finalize_timeout_ms; /* bound on each of finalize's waits (0: libmsg's timeout) */
    /* Request data one requesting rank may have held here at once, from the
     * arrival of a request's header until its reply; a request past it is
     * refused with RIO_ERR_PEER_MEMORY (0: max_transfer). */
    size_t peer_memory;
} rio_options_t;

void rio_options_init(rio_options_t *options);

/* Starts the shadow thread on an initialized libmsg context. IPC requests
 * for this process's worker are posted to worker_cq (may be NULL: they are
 * then refused with RIO_ERR_NO_HANDLER). options may be NULL. */
int rio_init(msg_context_t *msg, msg_cq_t *worker_cq, const rio_options_t *options, rio_t **rio);

/* Collective, orderly quiesce, bounded: waits for this process's
 * outstanding requests (at most finalize_timeout_ms), tells every rank it
 * has its replies and waits to hear the same from every live rank (at most
 * finalize_timeout_ms; a rank that has failed is not waited for), withdraws
 * the receives of requests whose data has not come, finishes the replies the
 * shadow thread is still sending, and stops it (at most finalize_timeout_ms).
 * A wait that runs out makes it return RIO_ERR_TIMEOUT; whatever the
 * other ranks do, it returns within three times finalize_timeout_ms and a
 * second. Call it from one thread,
 * after the application's own conversation is over. */
int rio_finalize(rio_t *rio);
/* Finalizes if needed, then frees. Keep the libmsg context alive until then. */
void rio_destroy(rio_t *rio);

/* ---- requests ---- */
/* Sends command + data to `target` on `rank` (the caller's own rank works
 * too). The reply's data lands in reply_buf; the completion arrives on cq
 * with op RIO_OP_REPLY, the reply status (or a transport error), bytes =
 * reply bytes delivered, source = rank, tag = command, and cookie. A reply
 * larger than reply_capacity is cut to it with status MSG_ERR_TRUNCATED.
 * data and reply_buf stay untouched until then. A non-zero return means no
 * completion will come. */
int rio_request(rio_t *rio, int rank, int target, uint32_t command, const void *data, size_t len,
                void *reply_buf, size_t reply_capacity, msg_cq_t *cq, void *cookie);

/* Blocking form: returns the reply status; *reply_len (may be NULL) gets the
 * reply bytes delivered. */
int rio_call(rio_t *rio, int rank, int target, uint32_t command, const void *data, size_t len,
             void *reply_buf, size_t reply_capacity, size_t *reply_len);

/* ---- serving IPC requests ---- */
typedef struct rio_request_info {
    int source; /* the requesting rank */
    uint32_t command;
    const void *data; /* the request data, valid until the reply */
    size_t len;
    size_t reply_capacity; /* what the requester can take */
} rio_request_info_t;

int rio_incoming_info(const rio_incoming_t *request, rio_request_info_t *info);

/* Answers a request (exactly once; the request handle is gone afterwards).
 * The data is copied: the caller may reuse it at once. */
int rio_reply(rio_t *rio, rio_incoming_t *request, int status, const void *data, size_t len);

/* Runs fn on the shadow thread for requests to RIO_TARGET_SHADOW carrying
 * `command` (an application code). fn must reply, there or later. Register
 * before peers can send the command. fn NULL removes the handler. */
typedef void (*rio_handler_fn)(rio_t *rio, rio_incoming_t *request, void *arg);
int rio_set_handler(rio_t *rio, uint32_t command, rio_handler_fn fn, void *arg);

/* ---- remote I/O ---- */
enum rio_export_flags { RIO_EXPORT_READ_ONLY = 0, RIO_EXPORT_READ_WRITE = 1 };
#define RIO_EXPORT_TO_END UINT64_MAX

/* Exports [offset, offset + length) of the file at path (length
 * RIO_EXPORT_TO_END: up to the file's size now). Peers address it by the
 * returned handle and offsets relative to the start of the range; nothing
 * outside the range, and no other file, can be reached. Handles are random
 * 64-bit values (never 0): knowing one tells nothing of the others. Returns
 * MSG_ERR_NOT_SUPPORTED if the system gives no random numbers. */
int rio_export(rio_t *rio, const char *path, uint64_t offset, uint64_t length, int flags,
               uint64_t *handle);
/* Withdraws an export: later requests on it get RIO_ERR_BAD_HANDLE;
 * transfers already started finish. */
int rio_withdraw(rio_t *rio, uint64_t handle);

/* Asynchronous remote read/write of the export `handle` on `rank`; the
 * completion (op RIO_OP_REPLY, bytes moved) arrives on cq with cookie. A
 * read's data lands directly in buf (by RDMA where libmsg's transport
 * supports it). */
int rio_read(rio_t *rio, int rank, uint64_t handle, uint64_t offset, void *buf, size_t len,
             msg_cq_t *cq, void *cookie);
int rio_write(rio_t *rio, int rank, uint64_t handle, uint64_t offset, const void *data, size_t len,
              msg_cq_t *cq, void *cookie);

/* The size of an export (its range length) on rank, and whether it is writable. */
int rio_stat(rio_t *rio, int rank, uint64_t handle, uint64_t *length, int *flags);

/* Blocking forms; *moved (may be NULL) gets the bytes moved. */
int rio_read_sync(rio_t *rio, int rank, uint64_t handle, uint64_t offset, void *buf, size_t len,
                  size_t *moved);
int rio_write_sync(rio_t *rio, int rank, uint64_t handle, uint64_t offset, const void *data,
                   size_t len);

/* ---- statistics ---- */
typedef struct rio_stats {
    uint64_t requests_issued; /* by this process */
    uint64_t replies_received;
    uint64_t requests_served;    /* answered by this process's shadow thread */
    uint64_t requests_forwarded; /* handed to this process's worker */
    uint64_t requests_refused;   /* answered with a libremoteio error status */
    uint64_t bad_requests;       /* malformed headers, dropped and counted */
    uint64_t bytes_read;         /* served from exported files */
    uint64_t bytes_written;
    uint64_t request_data_held; /* bytes of request data held now, from all requesters */
} rio_stats_t;

int rio_get_stats(const rio_t *rio, rio_stats_t *stats);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* RIO_RIO_H */
