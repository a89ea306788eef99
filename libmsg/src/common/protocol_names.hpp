// Every long-message protocol's names, once: its MSG_PROTOCOL_* value, the
// word VIADUCT_PROTOCOL, msg_protocol_name and the tools use, and the word
// the message trace writes.
#pragma once

#include "msg/msg.h"

namespace msg {

struct ProtocolNames {
    int protocol;
    const char *setting;
    const char *trace;
};

// The row of `protocol`, or of the setting word `setting`; null for none.
const ProtocolNames *protocol_names(int protocol);
const ProtocolNames *protocol_by_setting(const char *setting);

}  // namespace msg
