/* A C program built against an installed libremoteio: starts a job of one, starts
 * libremoteio on it and stops it again. */
#include <msg/msg.h>
#include <rio/rio.h>
#include <stdio.h>

int main(void) {
    msg_context_t *ctx;
    msg_cq_t *cq;
    rio_t *rio;
    rio_options_t options;
    int rc = msg_init(NULL, &ctx);
    if (rc != MSG_OK || (rc = msg_cq_create(ctx, &cq)) != MSG_OK) {
        fprintf(stderr, "hello-rio: %s\n", msg_strerror(rc));
        return 1;
    }
    rio_options_init(&options);
    if ((rc = rio_init(ctx, cq, &options, &rio)) != 0 || (rc = rio_finalize(rio)) != 0) {
        fprintf(stderr, "hello-rio: %s\n", rio_strerror(rc));
        return 1;
    }
    rio_destroy(rio);
    msg_cq_destroy(cq);
    msg_finalize(ctx);
    printf("hello-rio ok\n");
    return 0;
}
