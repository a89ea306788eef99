// Status codes to text: the one place msg_strerror's wording lives.
#include "msg/msg.h"

extern "C" const char *msg_strerror(int status) {
    switch (status) {
        case MSG_OK:
            return "success";
        case MSG_ERR_INVALID_ARG:
            return "invalid argument";
        case MSG_ERR_NO_MEMORY:
            return "out of memory";
        case MSG_ERR_TRUNCATED:
            return "message truncated: receive buffer smaller than message";
        case MSG_ERR_TIMEOUT:
            return "timed out";
        case MSG_ERR_PEER_FAILED:
            return "peer failed (exited or unreachable)";
        case MSG_ERR_UNKNOWN_RANK:
            return "unknown rank";
        case MSG_ERR_FINALIZED:
            return "context already finalized";
        case MSG_ERR_TRANSPORT:
            return "fabric transport error";
        case MSG_ERR_BOOTSTRAP:
            return "job bootstrap failed";
        case MSG_ERR_PROTOCOL:
            return "malformed or unexpected protocol header";
        case MSG_ERR_BUSY:
            return "object busy: operations still in flight";
        case MSG_ERR_NOT_SUPPORTED:
            return "operation not supported by this transport";
        case MSG_ERR_CONFIG:
            return "invalid configuration value";
        case MSG_ERR_CANCELED:
            return "receive canceled";
        case MSG_ERR_RESERVED_TAG:
            return "tag reserved for libmsg's own layers (libremoteio)";
        default:
            return "unknown status code";
    }
}
