/* A job that prints, from rank 0, what libmsg actually uses: the provider, eager_max, the mode
 * and the protocol table in force (msg_get_info, msg_get_protocol_table), one JSON object, for
 * info_test.py to hold msg-info's report against. */
#include <msg/msg.h>
#include <stdint.h>
#include <stdio.h>

int main(void) {
    msg_context_t *ctx = NULL;
    int rc = msg_init(NULL, &ctx);
    if (rc != MSG_OK) {
        fprintf(stderr, "msg_init: %s\n", msg_strerror(rc));
        return 1;
    }
    int rank = 0;
    msg_info_t info;
    msg_protocol_range_t ranges[16];
    size_t count = 0;
    if (msg_rank(ctx, &rank) != MSG_OK || msg_get_info(ctx, &info) != MSG_OK ||
        msg_get_protocol_table(ctx, ranges, 16, &count) != MSG_OK || count > 16) {
        fprintf(stderr, "reading the context failed\n");
        return 1;
    }
    if (rank == 0) {
        printf("{\"provider\": \"%s\", \"eager_max\": %zu, \"restricted\": %d, \"table\": [",
               info.provider, info.eager_max, info.restricted);
        for (size_t i = 0; i < count; ++i) {
            if (ranges[i].max_bytes == SIZE_MAX)
                printf("%s[null, \"%s\"]", i ? ", " : "", msg_protocol_name(ranges[i].protocol));
            else
                printf("%s[%zu, \"%s\"]", i ? ", " : "", ranges[i].max_bytes,
                       msg_protocol_name(ranges[i].protocol));
        }
        printf("]}\n");
    }
    rc = msg_finalize(ctx);
    msg_destroy(ctx);
    return rc == MSG_OK ? 0 : 1;
}
