// Which long-message protocol moves a message of a given size: one fixed
// protocol (VIADUCT_PROTOCOL=sendrecv|rdma|rdma-write), or, under auto, a
// table of size ranges per fabric and mode. The table's figures come from
// scripts/compare.py on the machines docs/libmsg.md names; a provider with
// no table of its own gets the default one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "msg/msg.h"

namespace msg {

// The provider's first name, by which tables are kept (built in and tuned): "tcp;ofi_rxm" ->
// "tcp".
std::string provider_first_name(const std::string &provider);

class ProtocolChoice {
  public:
    // Messages above eager_max up to each range's max_bytes (inclusive, in
    // ascending order; the last is SIZE_MAX) go by its protocol.
    struct Range {
        size_t max_bytes;
        int protocol;
    };

    // configured: MSG_PROTOCOL_AUTO picks the table for this provider and
    // mode, the one msg-tune measured on this host when the tuning file
    // (tuning.hpp) has one, else the built-in one; any other protocol is one
    // range of every size.
    ProtocolChoice(int configured, const std::string &provider, bool restricted);

    int pick(size_t len) const {
        for (const Range &r : ranges_)
            if (len <= r.max_bytes) return r.protocol;
        return ranges_.back().protocol;
    }
    const std::vector<Range> &ranges() const { return ranges_; }
    // Where the table comes from: "configured", "built-in", or "tuned on DATE (PATH)".
    const std::string &source() const { return source_; }

  private:
    bool take_tuned(const std::string &provider, bool restricted);

    std::vector<Range> ranges_;
    std::string source_;
};

}  // namespace msg
