// Fuzz target: the tuning file's parser (libmsg/src/protocol/tuning.hpp), which reads what
// another process wrote. Whatever the text, it either refuses it or gives a table whose ranges
// ascend, end at SIZE_MAX and name a protocol a message can move by.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/tuning.hpp"

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_tuning: %s\n", what);
    std::abort();
}

void check_table(const msg::TunedTable &t) {
    if (t.ranges.empty()) return;
    if (t.ranges.back().max_bytes != SIZE_MAX) broken("a table that ends before SIZE_MAX");
    for (size_t i = 0; i < t.ranges.size(); ++i) {
        const int p = t.ranges[i].protocol;
        if (p != MSG_PROTOCOL_SENDRECV && p != MSG_PROTOCOL_RDMA && p != MSG_PROTOCOL_RDMA_WRITE)
            broken("a range of no protocol a message moves by");
        if (i > 0 && t.ranges[i].max_bytes <= t.ranges[i - 1].max_bytes)
            broken("ranges that do not ascend");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    for (const char *provider : {"shm", "tcp"})
        for (bool restricted : {false, true}) {
            msg::TunedTable t;
            std::string why;
            if (msg::parse_tuning(text, "node7", provider, restricted, t, &why))
                check_table(t);
            else if (why.empty())
                broken("a refusal without a reason");
        }
    return 0;
}
