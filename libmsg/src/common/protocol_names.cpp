// The protocol names (protocol_names.hpp) and msg_protocol_name.
#include "common/protocol_names.hpp"

#include <cstring>

namespace msg {
namespace {

// MSG_PROTOCOL_SENDRECV, _RDMA, _RDMA_WRITE and _AUTO.
const ProtocolNames kProtocolNames[] = {
    {MSG_PROTOCOL_SENDRECV, "sendrecv", "send_recv"},
    {MSG_PROTOCOL_RDMA, "rdma", "rdma_read"},
    {MSG_PROTOCOL_RDMA_WRITE, "rdma-write", "rdma_write"},
    {MSG_PROTOCOL_AUTO, "auto", "auto"},
};

}  // namespace

const ProtocolNames *protocol_names(int protocol) {
    for (const ProtocolNames &n : kProtocolNames)
        if (n.protocol == protocol) return &n;
    return nullptr;
}

const ProtocolNames *protocol_by_setting(const char *setting) {
    for (const ProtocolNames &n : kProtocolNames)
        if (setting != nullptr && std::strcmp(setting, n.setting) == 0) return &n;
    return nullptr;
}

}  // namespace msg

extern "C" const char *msg_protocol_name(int protocol) {
    const msg::ProtocolNames *n = msg::protocol_names(protocol);
    return n != nullptr ? n->setting : nullptr;
}
