// What a cookie on the shadow thread's CQ points to: a Part says which piece
// of which request (ours or a peer's) a libmsg or file completion belongs to.
#pragma once

#include <cstdint>

namespace remoteio {

enum class PartKind : uint8_t {
    RequestReceive,  // a posted receive for incoming request headers
    RequestData,     // the separate data of an incoming request
    ReplyHeader,     // the reply header of a request of ours
    ReplyData,       // the reply data of a request of ours (direct placement)
    RequestSend,     // a send of a request of ours (header or data)
    ReplySend,       // a send of a reply we serve (header or data)
    FileIo,          // a file read or write done for an incoming request
    Stop,            // finalize asks the shadow thread to wind down
    Wake             // the shadow thread should look at its state again
};

struct Part {
    PartKind kind;
    void *owner;
};

}  // namespace remoteio
