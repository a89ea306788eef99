// Fuzz target: the decoders of the cluster sort's messages (monitor <-> nodes).
// A message that decodes must encode back to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "messages.hpp"

namespace cl = sortapp::cluster;

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_cluster_messages: %s\n", what);
    std::abort();
}

// exact: the encoding is canonical, so the message itself must come back.
template <typename Message>
void round_trip(const uint8_t *data, size_t size, bool exact) {
    Message m;
    if (!cl::decode(data, size, m)) return;
    const std::vector<char> once = cl::encode(m);
    if (exact && std::vector<char>(data, data + size) != once)
        broken("a decoded message encodes to other bytes");
    Message again;
    if (!cl::decode(once.data(), once.size(), again)) broken("an encoded message does not decode");
    if (cl::encode(again) != once) broken("decode and encode disagree");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const uint8_t *msg = data + 1;
    const size_t len = size - 1;
    switch (data[0] % 9) {
        case 0:
            round_trip<cl::JobParams>(msg, len, true);
            break;
        case 1:
            round_trip<cl::NodeCheck>(msg, len, true);
            break;
        case 2:
            round_trip<cl::LocalDone>(msg, len, true);
            break;
        case 3:
            round_trip<cl::MergeOrder>(msg, len, true);
            break;
        case 4:
            round_trip<cl::PhaseFigures>(msg, len, true);
            break;
        case 5:
            // `whole` is a flag sent as a u32: any non-zero value reads as 1.
            round_trip<cl::SampleRequest>(msg, len, false);
            break;
        case 6:
            round_trip<cl::SampleReply>(msg, len, true);
            break;
        case 7:
            round_trip<cl::CountRequest>(msg, len, true);
            break;
        default:
            round_trip<cl::CountReply>(msg, len, true);
    }
    return 0;
}
