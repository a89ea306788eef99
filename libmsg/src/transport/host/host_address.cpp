// Connecting the pieces every transport of one host shares (host_address.hpp).
#include "transport/host/host_address.hpp"

#include <string>

#include "common/log.hpp"
#include "transport/host/cma.hpp"
#include "transport/host/doorbell.hpp"

namespace msg {

int connect_host_peers(Doorbell *bell, CrossMemory *cma, std::vector<PeerAddress> &peers,
                       int self) {
    std::vector<std::vector<uint8_t>> bells(peers.size()), blobs(peers.size());
    for (size_t r = 0; r < peers.size(); ++r) {
        bells[r] = std::move(peers[r].bell);
        blobs[r] = std::move(peers[r].blob);
    }
    if (bell != nullptr) {
        std::string why;
        if (int rc = bell->connect(bells, self, &why); rc != 0) {
            log_error("%s", why.c_str());
            return rc;
        }
    }
    if (cma != nullptr) cma->connect(blobs, self);
    return 0;
}

}  // namespace msg
