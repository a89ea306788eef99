// The engine's live requests by id: what every packet naming a request is
// looked up in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "protocol/request.hpp"

namespace msg {

// Finished requests' map nodes, each with its Request, are kept (up to kSpare) and reused: a
// message then allocates nothing here.
class RequestTable {
    using Map = std::unordered_map<uint64_t, std::unique_ptr<Request>>;

  public:
    Request *add(bool is_send, int peer, int tag, CompletionSink *sink, void *cookie) {
        Map::node_type node;
        if (spare_.empty()) {
            Map fresh;
            node = fresh.extract(fresh.emplace(0, std::make_unique<Request>()).first);
        } else {
            node = std::move(spare_.back());
            spare_.pop_back();
        }
        Request *r = node.mapped().get();
        r->id = next_id_++;
        r->is_send = is_send;
        r->peer = peer;
        r->tag = tag;
        r->sink = sink;
        r->cookie = cookie;
        node.key() = r->id;
        live_.insert(std::move(node));
        if (is_send) ++sends_;
        return r;
    }
    // Forgets r; it must not be used again.
    void remove(Request *r) {
        if (r->is_send) --sends_;
        Map::node_type node = live_.extract(r->id);
        if (node.empty() || spare_.size() >= kSpare) return;
        *node.mapped() = Request{};
        spare_.push_back(std::move(node));
    }
    // Request `id`, if live and (peer >= 0) with that peer.
    Request *find(uint64_t id, int peer) const {
        auto it = live_.find(id);
        if (it == live_.end()) return nullptr;
        if (peer >= 0 && it->second->peer != peer) return nullptr;
        return it->second.get();
    }
    size_t sends() const { return sends_; }
    // The ids of the live requests `pick` chooses, oldest first.
    template <class Pick>
    std::vector<uint64_t> ids(Pick pick) const {
        std::vector<uint64_t> out;
        for (const auto &[id, r] : live_)
            if (pick(*r)) out.push_back(id);
        std::sort(out.begin(), out.end());
        return out;
    }

  private:
    static constexpr size_t kSpare = 64;
    uint64_t next_id_ = 1;
    Map live_;
    std::vector<Map::node_type> spare_;
    size_t sends_ = 0;
};

}  // namespace msg
