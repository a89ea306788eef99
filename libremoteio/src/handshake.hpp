// Finalize's handshake: every rank tells every other one that it has all its
// replies, so that afterwards no request is in anyone's hands.
#pragma once

#include "msg/msg.h"

namespace remoteio {

// Tells every rank this one has its replies and waits, at most timeout_ms,
// to hear the same from every live rank (a failed rank is not waited for).
int finalize_handshake(msg_context_t *msg, int rank, int size, int timeout_ms);

}  // namespace remoteio
