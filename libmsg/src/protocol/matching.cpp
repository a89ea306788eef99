// The posted receives and the unexpected list (matching.hpp).
#include "protocol/matching.hpp"

namespace msg {

void Matching::post(Request *r) {
    r->in_posted = true;
    r->posted_it = posted_.insert(posted_.end(), r);
}

void Matching::unpost(Request *r) {
    if (!r->in_posted) return;
    posted_.erase(r->posted_it);
    r->in_posted = false;
}

Request *Matching::first_posted(int src, int tag) const {
    for (Request *r : posted_)
        if (matches(*r, src, tag)) return r;
    return nullptr;
}

std::vector<Request *> Matching::posted_for(const CompletionSink *sink) const {
    std::vector<Request *> out;
    for (Request *r : posted_)
        if (r->sink == sink) out.push_back(r);
    return out;
}

void Matching::count(const Unexpected &u, int self, bool in) {
    if (u.offer.src == self) return;
    Held &h = held_[static_cast<size_t>(u.offer.src)];
    if (in) {
        ++h.count;
        h.bytes += u.data.size();
    } else {
        --h.count;
        h.bytes -= u.data.size();
    }
}

void Matching::hold(Unexpected u, int self) {
    count(u, self, true);
    unexpected_.push_back(std::move(u));
}

std::optional<Unexpected> Matching::take_for(const Request &r, int self) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (!matches(r, it->offer.src, it->offer.tag)) continue;
        Unexpected u = std::move(*it);
        unexpected_.erase(it);
        count(u, self, false);
        return u;
    }
    return std::nullopt;
}

const Unexpected *Matching::peek(int source, int tag, bool all_tags) const {
    for (const Unexpected &u : unexpected_) {
        if ((source == MSG_ANY_SOURCE || source == u.offer.src) &&
            tag_matches(tag, all_tags, u.offer.tag))
            return &u;
    }
    return nullptr;
}

void Matching::drop_offers_from(int rank) {
    unexpected_.remove_if([&](const Unexpected &u) {
        if (u.offer.src != rank || u.type != PacketType::Rts) return false;
        --held_[static_cast<size_t>(rank)].count;
        return true;
    });
}

void Matching::clear() {
    unexpected_.clear();
}

}  // namespace msg
