/* cq_poll: an event loop around a completion queue. Every rank sends MESSAGES numbered
 * messages to every rank (itself included), keeping at most WINDOW sends in flight to each
 * and RECEIVES receives posted; all of them complete on one queue, whose file descriptor
 * (msg_cq_get_fd) the loop watches with poll(2), as a server watches its sockets. Each
 * completion posts the next operation, until every message has been sent and received;
 * every rank then checks that it got each message of every rank exactly once.
 *
 *   cc -std=c99 cq_poll.c -o cq_poll $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./cq_poll */
#define _POSIX_C_SOURCE 200809L /* poll(2) under -std=c99 */
#include <msg/msg.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MESSAGES 200 /* to every rank */
#define WINDOW 4     /* sends in flight to one rank */
#define RECEIVES 8   /* receives posted at a time, from any rank */
#define TAG_DATA 5
/* The loop gives up when the queue stays empty this long. A peer that exits or is killed
 * completes this rank's operations with MSG_ERR_PEER_FAILED at once; this only bounds one
 * that is alive but never sends. */
#define WATCHDOG_MS 60000

/* A message: who sent it and its number among the sender's messages to this rank. */
struct message {
    int32_t source;
    int32_t seq;
};

/* A send's buffer belongs to libmsg from msg_isend to its completion, so each operation has
 * a slot of its own, and the slot's address is the operation's cookie: the completion leads
 * straight back to it. */
struct send_slot {
    int dest;
    struct message m;
};

struct state {
    msg_context_t *ctx;
    msg_cq_t *cq;
    int rank, size;
    int *next_seq;               /* per destination: the next message's number */
    unsigned char *seen;         /* per source and number: received already */
    long received, expected;     /* messages received, and to receive in all */
    long sends_open, recvs_open; /* operations posted and not yet completed */
    long recvs_posted;           /* receives posted in all (never more than expected) */
    struct send_slot *sends;     /* size * WINDOW slots */
    struct message recvs[RECEIVES];
};

static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "cq_poll: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* Sends slot's destination its next message, if it has one left to get. */
static int post_send(struct state *s, struct send_slot *slot) {
    if (s->next_seq[slot->dest] == MESSAGES) return 0;
    slot->m.source = s->rank;
    slot->m.seq = s->next_seq[slot->dest]++;
    ++s->sends_open;
    return failed(s->rank, "msg_isend",
                  msg_isend(s->ctx, slot->dest, TAG_DATA, &slot->m, sizeof slot->m, s->cq, slot));
}

/* Posts a receive into the buffer `m`, unless every message this rank is to get already has
 * a receive: one left posted would never complete, and msg_cq_destroy refuses a queue with
 * operations in flight. */
static int post_recv(struct state *s, struct message *m) {
    if (s->recvs_posted == s->expected) return 0;
    ++s->recvs_posted;
    ++s->recvs_open;
    return failed(s->rank, "msg_irecv",
                  msg_irecv(s->ctx, MSG_ANY_SOURCE, TAG_DATA, m, sizeof *m, s->cq, m));
}

/* One completion: a receive is checked and its buffer reposted, a finished send's slot
 * carries the next message to the same rank. */
static int handle(struct state *s, const msg_completion_t *c) {
    /* The operation's own outcome, separate from msg_cq_wait's. */
    if (failed(s->rank, c->op == MSG_OP_SEND ? "a send" : "a receive", c->status)) return 1;
    if (c->op == MSG_OP_SEND) {
        --s->sends_open;
        return post_send(s, c->cookie);
    }
    struct message *m = c->cookie;
    --s->recvs_open;
    if (c->bytes != sizeof *m || m->source != c->source || m->seq < 0 || m->seq >= MESSAGES ||
        s->seen[(size_t)m->source * MESSAGES + (size_t)m->seq]) {
        fprintf(stderr,
                "cq_poll: rank %d: from rank %d: %zu bytes, message %d of rank %d, "
                "unexpected or seen before\n",
                s->rank, c->source, c->bytes, m->seq, m->source);
        return 1;
    }
    s->seen[(size_t)m->source * MESSAGES + (size_t)m->seq] = 1;
    ++s->received;
    return post_recv(s, m);
}

/* The loop: sleep in poll(2) until the queue's descriptor is readable, then take every
 * completion it holds. The descriptor is readable exactly while the queue holds completions,
 * so taking them with msg_cq_wait(cq, 0, ...) until MSG_ERR_TIMEOUT leaves it unreadable
 * again, and it suits edge-triggered epoll as well. It is libmsg's: never read, write or
 * close it. A program with sockets, pipes or timers of its own puts them in the same array.
 * Returns the number of wake-ups, or -1. */
static long event_loop(struct state *s) {
    struct pollfd fds[1] = {{.events = POLLIN}};
    msg_completion_t c;
    long wakeups = 0;
    if (failed(s->rank, "msg_cq_get_fd", msg_cq_get_fd(s->cq, &fds[0].fd))) return -1;
    while (s->sends_open > 0 || s->recvs_open > 0) {
        int n = poll(fds, 1, WATCHDOG_MS);
        if (n < 0) {
            perror("cq_poll: poll");
            return -1;
        }
        if (n == 0) {
            fprintf(stderr, "cq_poll: rank %d: nothing completed for %d ms\n", s->rank,
                    WATCHDOG_MS);
            return -1;
        }
        ++wakeups;
        int rc;
        while ((rc = msg_cq_wait(s->cq, 0, &c)) == MSG_OK) {
            if (handle(s, &c) != 0) return -1;
        }
        if (rc != MSG_ERR_TIMEOUT && failed(s->rank, "msg_cq_wait", rc)) return -1;
    }
    return wakeups;
}

/* Posts the first receives and the first WINDOW sends to every rank, runs the loop, and
 * checks that every message of every rank arrived. */
static int exchange(struct state *s) {
    for (int i = 0; i < RECEIVES; ++i) {
        if (post_recv(s, &s->recvs[i]) != 0) return 1;
    }
    for (int dest = 0; dest < s->size; ++dest) {
        for (int w = 0; w < WINDOW; ++w) {
            struct send_slot *slot = &s->sends[dest * WINDOW + w];
            slot->dest = dest;
            if (post_send(s, slot) != 0) return 1;
        }
    }
    long wakeups = event_loop(s);
    if (wakeups < 0) return 1;
    if (s->received != s->expected) {
        fprintf(stderr, "cq_poll: rank %d: %ld messages received, expected %ld\n", s->rank,
                s->received, s->expected);
        return 1;
    }
    if (s->rank == 0) {
        printf(
            "cq_poll: %d ranks, %d messages from every rank to every rank, all received "
            "once\n",
            s->size, MESSAGES);
        printf("cq_poll: rank 0 took its %ld completions in %ld wake-ups of poll\n",
               s->expected + (long)s->size * MESSAGES, wakeups);
    }
    return 0;
}

int main(void) {
    struct state s = {.rank = -1};

    if (failed(s.rank, "msg_init", msg_init(NULL, &s.ctx))) return 1;
    /* A failed call leaves without msg_finalize: the job counts this rank as failed, and the
     * other ranks' operations with it end with MSG_ERR_PEER_FAILED. */
    if (failed(s.rank, "msg_rank", msg_rank(s.ctx, &s.rank)) ||
        failed(s.rank, "msg_size", msg_size(s.ctx, &s.size)) ||
        failed(s.rank, "msg_cq_create", msg_cq_create(s.ctx, &s.cq)))
        return 1;
    s.expected = (long)s.size * MESSAGES;
    s.next_seq = calloc((size_t)s.size, sizeof *s.next_seq);
    s.seen = calloc((size_t)s.size * MESSAGES, 1);
    s.sends = calloc((size_t)s.size * WINDOW, sizeof *s.sends);
    if (s.next_seq == NULL || s.seen == NULL || s.sends == NULL) {
        fprintf(stderr, "cq_poll: rank %d: out of memory\n", s.rank);
        return 1;
    }
    if (exchange(&s) != 0) return 1;

    /* Every operation has completed, so the queue can go; msg_finalize then waits for every
     * other rank to finish too. */
    if (failed(s.rank, "msg_cq_destroy", msg_cq_destroy(s.cq)) ||
        failed(s.rank, "msg_finalize", msg_finalize(s.ctx)))
        return 1;
    msg_destroy(s.ctx);
    free(s.next_seq);
    free(s.seen);
    free(s.sends);
    return 0;
}
