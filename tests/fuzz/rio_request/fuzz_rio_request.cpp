// Fuzz target: libremoteio's request and reply checks, against what the shadow
// thread and the requester rely on once a message has been accepted.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "wire.hpp"

using remoteio::ReplyHeader;
using remoteio::RequestHeader;

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_rio_request: %s\n", what);
    std::abort();
}

void request(const uint8_t *msg, size_t bytes, size_t inline_max) {
    RequestHeader h{};
    std::memcpy(&h, msg, bytes < sizeof h ? bytes : sizeof h);
    const char *why = remoteio::check_request(h, bytes, inline_max);
    if (why != nullptr) return;
    if (bytes < sizeof h || bytes > remoteio::request_message_max(inline_max))
        broken("a request of impossible size accepted");
    if (h.magic != remoteio::kRequestMagic || h.version != remoteio::kVersion)
        broken("a foreign request accepted");
    // Every tag of the requester's block must be a valid, non-negative int.
    const int64_t last = static_cast<int64_t>(h.tag_base) + remoteio::kTagsPerRequest - 1;
    if (h.tag_base < static_cast<uint32_t>(remoteio::kTagFirstDynamic) || last > INT32_MAX)
        broken("a tag block outside the dynamic tags accepted");
    if (h.flags & remoteio::kDataInline) {
        if (h.data_len > inline_max || sizeof h + h.data_len != bytes)
            broken("inline data that is not in the message accepted");
        // The shadow thread copies the inline data out of the message.
        volatile uint8_t sum = 0;
        for (size_t i = sizeof h; i < sizeof h + h.data_len; ++i) sum = sum ^ msg[i];
    } else if (bytes != sizeof h) {
        broken("trailing bytes accepted");
    }
}

void reply(const uint8_t *msg, size_t bytes) {
    ReplyHeader h{};
    std::memcpy(&h, msg, bytes < sizeof h ? bytes : sizeof h);
    if (remoteio::check_reply(h, bytes) != nullptr) return;
    if (h.sent_len > h.data_len) broken("a reply sending more than it holds accepted");
    if (h.inline_data && sizeof h + h.sent_len != bytes)
        broken("inline reply data that is not in the message accepted");
    if (!h.inline_data && bytes != sizeof h) broken("trailing reply bytes accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    // The first byte sets the inline limit (as eager_max would), the second
    // whether the rest is a request or a reply.
    const size_t inline_max = static_cast<size_t>(data[0]) * 32;
    if (data[1] & 1)
        reply(data + 2, size - 2);
    else
        request(data + 2, size - 2, inline_max);
    return 0;
}
