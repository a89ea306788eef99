// The shared receive pool's plan and its grants and reclaims.
#include "protocol/receive_pool.hpp"

#include <algorithm>

namespace msg {

bool plan_receives(int size, int credits, int active_peers, size_t max_posted, ReceivePlan *plan,
                   std::string *why) {
    *plan = ReceivePlan{};
    if (size <= 1) return true;
    const size_t peers = static_cast<size_t>(size - 1);
    const size_t fit = max_posted / peers;
    if (fit < 3) {
        *why = std::to_string(peers) + " peers do not fit a receive queue of " +
               std::to_string(max_posted) + " (each needs 3)";
        return false;
    }
    if (peers <= static_cast<size_t>(std::max(active_peers, 1)) || fit == 3) {
        // Every peer may be active at once: each has its window from the
        // start, lowered to fit the receive queue.
        plan->credits = plan->base = static_cast<int>(std::min<size_t>(credits, fit - 2));
        plan->posted = peers * static_cast<size_t>(plan->base + 2);
        return true;
    }
    // Two credits keep one for a new message and one for those under way
    // (PacketFlow's reserve).
    plan->credits = credits;
    plan->base = std::min(credits, 2);
    plan->posted = peers * static_cast<size_t>(plan->base + 2);
    plan->spare =
        std::min(static_cast<size_t>(active_peers) * static_cast<size_t>(credits - plan->base),
                 max_posted - plan->posted);
    return true;
}

ReceivePool::ReceivePool(int size, const ReceivePlan &plan)
    : plan_(plan),
      wants_(static_cast<size_t>(std::max(size, 0)), Want::Nothing),
      spare_(plan.spare) {}

void ReceivePool::set(size_t p, int window, bool waiting) {
    if (wants_[p] != Want::Nothing) --waiters_;
    if (wants_[p] == Want::MoreAtBase) --starved_;
    wants_[p] = !waiting ? Want::Nothing : window == plan_.base ? Want::MoreAtBase : Want::More;
    if (wants_[p] != Want::Nothing) ++waiters_;
    if (wants_[p] == Want::MoreAtBase) ++starved_;
}

ReceivePool::Credit ReceivePool::consumed(int peer, int window) {
    const auto p = static_cast<size_t>(peer);
    if (window < plan_.credits) {
        if (spare_ > 0) {
            --spare_;
            set(p, window + 1, false);
            return Credit::Grant;
        }
        set(p, window, true);
    }
    // A peer above its base gives one back for each waiting peer not yet
    // provided for: to one still at its base always, to any other only when
    // it waits for none itself (so the pool is shared, not kept by those
    // that came first).
    const bool waits = wants_[p] != Want::Nothing;
    if (window > plan_.base && (starved_ > spare_ || (!waits && waiters_ > spare_))) {
        set(p, window - 1, waits);
        ++spare_;
        return Credit::Reclaim;
    }
    return Credit::Return;
}

}  // namespace msg
