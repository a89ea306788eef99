// What the cookie of a libremoteio operation points to: a Part says which
// piece of which request (ours or a peer's) a completion belongs to. Each of
// libremoteio's three CQs carries its own kinds, listed under it.
#pragma once

#include <cstdint>

namespace remoteio {

enum class PartKind : uint8_t {
    // The shadow thread's CQ (server.cpp): what the shadow thread waits for.
    RequestReceive,  // a posted receive for incoming request headers
    RequestData,     // the separate data of an incoming request
    FileIo,          // a file read or write done for an incoming request
    Stop,            // finalize asks the shadow thread to wind down
    Wake,            // the shadow thread should look at its state again
    // The client's callback CQ (client.cpp): the parts of requests of ours.
    RequestSend,  // a send of a request of ours (header or data)
    ReplyHeader,  // the reply header of a request of ours
    ReplyData,    // the reply data of a request of ours (direct placement)
    // The server's callback CQ (server_reply.cpp): the sends of our replies.
    ReplySend  // a send of a reply we serve (header or data)
};

struct Part {
    PartKind kind;
    void *owner;
};

}  // namespace remoteio
