// msg_get_version: the version of the libmsg actually loaded, which may differ from the
// MSG_VERSION_* macros an application was compiled with.
#include "msg/msg.h"

extern "C" int msg_get_version(int *major, int *minor, int *patch) {
    if (major == nullptr || minor == nullptr || patch == nullptr) {
        return MSG_ERR_INVALID_ARG;
    }
    *major = MSG_VERSION_MAJOR;
    *minor = MSG_VERSION_MINOR;
    *patch = MSG_VERSION_PATCH;
    return MSG_OK;
}
