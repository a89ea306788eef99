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

class RequestTable {
  public:
    Request *add(bool is_send, int peer, int tag, CompletionSink *sink, void *cookie) {
        auto r = std::make_unique<Request>();
        r->id = next_id_++;
        r->is_send = is_send;
        r->peer = peer;
        r->tag = tag;
        r->sink = sink;
        r->cookie = cookie;
        Request *raw = r.get();
        live_.emplace(raw->id, std::move(r));
        if (is_send) ++sends_;
        return raw;
    }
    // Forgets r; it is destroyed.
    void remove(Request *r) {
        if (r->is_send) --sends_;
        live_.erase(r->id);
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
    uint64_t next_id_ = 1;
    std::unordered_map<uint64_t, std::unique_ptr<Request>> live_;
    size_t sends_ = 0;
};

}  // namespace msg
