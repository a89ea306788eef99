// Tag matching: the receives posted and not yet matched, in posting order, and the messages
// that arrived before any receive matched them (the unexpected list), in arrival order, with
// what each peer holds there. The engine decides what happens on a match; this keeps the
// two lists and MPI's matching rule (the first posted receive that matches an arrival, the
// first arrival that matches a receive). Not thread safe: the engine's caller serializes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "msg/msg.h"
#include "protocol/request.hpp"
#include "protocol/wire.hpp"

namespace msg {

class CompletionSink;

// What a message-opening packet says: an RTS's offer, or an eager message's envelope.
struct Offer {
    int src = 0;
    int tag = 0;
    uint64_t len = 0;
    uint64_t send_id = 0;
    uint32_t flags = 0;
    uint64_t addr = 0, key = 0;
};

// A message no receive had matched when it arrived.
struct Unexpected {
    PacketType type;  // Eager (data held) or Rts (src == self: a long self send)
    Offer offer;
    std::vector<char> data;
};

class Matching {
  public:
    explicit Matching(int size) : held_(static_cast<size_t>(size)) {}

    // wanted matches tag; MSG_ANY_TAG takes the reserved tags only for all_tags.
    static bool tag_matches(int wanted, bool all_tags, int tag) {
        return wanted == tag ||
               (wanted == MSG_ANY_TAG && (all_tags || tag < MSG_TAG_RESERVED_FIRST));
    }
    static bool matches(const Request &r, int src, int tag) {
        return (r.peer == MSG_ANY_SOURCE || r.peer == src) && tag_matches(r.tag, r.all_tags, tag);
    }

    // ---- posted receives ----
    void post(Request *r);
    // Out of the posted list, if it is there (matched, completed or discarded).
    void unpost(Request *r);
    // The first posted receive an arrival from src with tag matches, left posted; null if none.
    Request *first_posted(int src, int tag) const;
    // The posted receives bound to sink, in posting order.
    std::vector<Request *> posted_for(const CompletionSink *sink) const;

    // ---- the unexpected list ----
    // Holds u, counting it against its sender when it came from another rank.
    void hold(Unexpected u, int self);
    // The first held message receive r matches, taken out of the list (counts included).
    std::optional<Unexpected> take_for(const Request &r, int self);
    // The first held message a receive (source, tag) would take, left in place; null if none.
    const Unexpected *peek(int source, int tag, bool all_tags) const;
    // Drops the RTSs held from a failed peer (their senders will never move the data);
    // eager messages, whose data is here, stay to be received.
    void drop_offers_from(int rank);
    void clear();

    // What `rank`'s held messages amount to.
    size_t held_count(int rank) const { return held_[static_cast<size_t>(rank)].count; }
    size_t held_bytes(int rank) const { return held_[static_cast<size_t>(rank)].bytes; }

  private:
    struct Held {
        size_t count = 0, bytes = 0;
    };
    void count(const Unexpected &u, int self, bool in);

    std::list<Request *> posted_;       // receives in posting order
    std::list<Unexpected> unexpected_;  // arrivals in arrival order
    std::vector<Held> held_;            // by sender
};

}  // namespace msg
