// A C++ program built against an installed libmsg (msg.h from C++): starts the job, sums
// the ranks at rank 0, and prints one line per rank.
#include <msg/msg.h>

#include <cstdio>
#include <string>

namespace {

int check(const char *what, int rc) {
    if (rc != MSG_OK) {
        std::fprintf(stderr, "hello-cpp: %s: %s\n", what, msg_strerror(rc));
    }
    return rc;
}

}  // namespace

int main() {
    msg_context_t *ctx = nullptr;
    if (check("msg_init", msg_init(nullptr, &ctx)) != MSG_OK) {
        return 1;
    }
    int rank = 0, size = 0;
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    std::string line = "hello-cpp rank " + std::to_string(rank) + " of " + std::to_string(size);
    if (rank != 0 && check("msg_send", msg_send(ctx, 0, 3, &rank, sizeof rank)) != MSG_OK) {
        return 1;
    }
    if (rank == 0) {
        int sum = 0;
        for (int i = 1; i < size; ++i) {
            int v = 0;
            if (check("msg_recv", msg_recv(ctx, MSG_ANY_SOURCE, 3, &v, sizeof v, nullptr)) !=
                MSG_OK) {
                return 1;
            }
            sum += v;
        }
        line += " sum " + std::to_string(sum);
    }
    if (check("msg_finalize", msg_finalize(ctx)) != MSG_OK) {
        return 1;
    }
    std::puts(line.c_str());
    return 0;
}
