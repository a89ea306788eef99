// libremoteio's messages on libmsg: a request header (with the data inline when
// it is small) and a reply header, and the checks made before either is used.
#pragma once

#include <cstddef>
#include <cstdint>

#include "msg/msg.h"

namespace remoteio {

constexpr uint32_t kRequestMagic = 0x52494f51;  // "RIOQ"
constexpr uint32_t kReplyMagic = 0x52494f52;    // "RIOR"
constexpr uint16_t kVersion = 1;

// Built-in commands, served by the shadow thread itself.
constexpr uint32_t kCmdRead = 0xffff0001u;
constexpr uint32_t kCmdWrite = 0xffff0002u;
constexpr uint32_t kCmdStat = 0xffff0003u;

// libmsg tags: every request header goes to kTagRequest; each request owns
// a block of kTagsPerRequest tags above kTagFirstDynamic for its own parts.
// They are libmsg's reserved tags (sent with MSG_FLAG_RESERVED_TAG), out of
// the application's reach (client.cpp checks that they are).
// libremoteio's share of the reserved range ends below libmsg's collectives'
// (MSG_TAG_COLLECTIVE_FIRST): a request's block never reaches into it.
constexpr int kTagRequest = 0x40000000;
constexpr int kTagFirstDynamic = 0x40000010;
constexpr int kTagLastDynamic = MSG_TAG_COLLECTIVE_FIRST - 1;
constexpr int kTagsPerRequest = 4;
static_assert(kTagLastDynamic < MSG_TAG_MAX &&
              (kTagLastDynamic + 1 - kTagFirstDynamic) % kTagsPerRequest == 0);
constexpr int kReplyHeaderTag = 0;  // offsets within a request's block
constexpr int kReplyDataTag = 1;
constexpr int kRequestDataTag = 2;

enum RequestFlags : uint8_t {
    kDataInline = 1,  // the request data follows the header in the same message
    kReplyDirect = 2  // reply data comes on its own tag, straight into the reply buffer
};

struct RequestHeader {
    uint32_t magic;
    uint16_t version;
    uint8_t target;
    uint8_t flags;
    uint32_t command;
    uint32_t tag_base;  // the requester's tag block
    uint64_t data_len;
    uint64_t reply_capacity;
    uint64_t handle;  // remote I/O
    uint64_t offset;
    uint64_t length;
    uint64_t reserved;
};
static_assert(sizeof(RequestHeader) == 64);

struct ReplyHeader {
    uint32_t magic;
    uint16_t version;
    uint8_t inline_data;  // 1: the data follows this header
    uint8_t reserved0;
    int32_t status;
    uint32_t reserved1;
    uint64_t data_len;  // the reply's full size (may exceed what was sent)
    uint64_t sent_len;  // bytes that follow, inline or on the data tag
};
static_assert(sizeof(ReplyHeader) == 32);

// Request messages are at most this long (header + inline data); also the
// size of the shadow thread's posted receive buffers.
inline size_t request_message_max(size_t inline_max) {
    return sizeof(RequestHeader) + inline_max;
}

// Null if `bytes` received bytes hold a well-formed request, else why not.
inline const char *check_request(const RequestHeader &h, size_t bytes, size_t inline_max) {
    if (bytes < sizeof(RequestHeader)) return "shorter than a request header";
    if (h.magic != kRequestMagic) return "bad magic";
    if (h.version != kVersion) return "unknown version";
    if (h.target > 1) return "unknown target";
    if ((h.flags & ~(kDataInline | kReplyDirect)) != 0) return "unknown flags";
    if (h.tag_base < static_cast<uint32_t>(kTagFirstDynamic) ||
        h.tag_base > static_cast<uint32_t>(kTagLastDynamic + 1 - kTagsPerRequest))
        return "tag block out of range";
    if (h.flags & kDataInline) {
        if (h.data_len > inline_max || bytes != sizeof(RequestHeader) + h.data_len)
            return "inline data length does not match the message";
    } else if (bytes != sizeof(RequestHeader)) {
        return "trailing bytes after the header";
    }
    return nullptr;
}

inline const char *check_reply(const ReplyHeader &h, size_t bytes) {
    if (bytes < sizeof(ReplyHeader)) return "shorter than a reply header";
    if (h.magic != kReplyMagic || h.version != kVersion) return "bad magic or version";
    if (h.sent_len > h.data_len) return "sent more than the reply holds";
    if (h.inline_data && bytes != sizeof(ReplyHeader) + h.sent_len)
        return "inline data length does not match the message";
    if (!h.inline_data && bytes != sizeof(ReplyHeader)) return "trailing bytes after the header";
    return nullptr;
}

}  // namespace remoteio
