// Receive buffers shared by the peers (docs/libmsg.md, Receive memory). In a
// job of no more than active_peers + 1 ranks every peer has its whole window
// (`credits` buffers, and two for credit returns) from the start. In a larger
// one every peer may fill `base` buffers (its first credits) and two more
// with credit returns; a pool of spare buffers goes to the peers that send, one more
// credit each time one of their packets is consumed, up to `credits`. When
// the pool is empty and a peer waits for more, a peer above its base gives
// one back the next time one of its packets is consumed (its credit is not
// returned and the buffer is kept instead of posted again): always to a peer
// at its base, to another only if it waits for none itself. Memory therefore
// grows with the peers that send, not with the size of the job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msg {

struct ReceivePlan {
    int base = 0;       // credits every peer starts with
    int credits = 0;    // the most any peer may hold (the window's top)
    size_t posted = 0;  // buffers posted at the start
    size_t spare = 0;   // buffers kept to grant
    size_t buffers() const { return posted + spare; }
};

// The plan for a job of `size` ranks whose fabric posts at most max_posted
// receives. Every rank computes the same base and credits from the same
// settings (credits and active_peers are the job's flow control, agreed at
// msg_init).
// False, with *why, when the peers do not fit the receive queue.
bool plan_receives(int size, int credits, int active_peers, size_t max_posted, ReceivePlan *plan,
                   std::string *why);

class ReceivePool {
  public:
    ReceivePool(int size, const ReceivePlan &plan);

    // What to do with the credit of a consumed packet from `peer`.
    enum class Credit {
        Return,  // return it
        Grant,   // return it and one more: post a spare buffer first
        Reclaim  // keep it: the packet's buffer becomes spare, the peer's window shrinks
    };
    // `window`: the credits the peer may hold here now (PacketFlow keeps it, and
    // grows or shrinks it as the answer says).
    Credit consumed(int peer, int window);
    size_t spare() const { return spare_; }

  private:
    enum class Want : uint8_t { Nothing, More, MoreAtBase };
    // Notes whether peer p, now at `window`, waits for a grant, keeping the counts.
    void set(size_t p, int window, bool waiting);

    ReceivePlan plan_;
    std::vector<Want> wants_;  // below the top: wanted a grant, none was spare
    size_t spare_;
    size_t waiters_ = 0;
    size_t starved_ = 0;  // waiting at their base
};

}  // namespace msg
