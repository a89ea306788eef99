// A collective as data: rounds of messages with one peer each, every message
// of a round in flight at once, then the round's local work (a reduction, a
// copy) before the next round starts. Each algorithm file builds one.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace msg {

struct CollMessage {
    enum State { Idle, Posted, Done, Canceled };
    bool send = false;
    int peer = 0;
    char *buf = nullptr;
    size_t len = 0;
    State state = Idle;
};

struct Round {
    std::vector<CollMessage> messages;
    std::function<void()> then;  // may be empty
};

class Schedule {
  public:
    Schedule(int rank, int size) : rank(rank), size(size) {}
    // A new round, to add messages and work to.
    Round &round() { return rounds.emplace_back(); }
    void send(Round &r, int peer, const void *buf, size_t len) {
        r.messages.push_back({true, peer, static_cast<char *>(const_cast<void *>(buf)), len});
    }
    void recv(Round &r, int peer, void *buf, size_t len) {
        r.messages.push_back({false, peer, static_cast<char *>(buf), len});
    }
    // Scratch memory that lives as long as the collective.
    char *scratch(size_t bytes) {
        buffers.push_back(std::make_unique_for_overwrite<char[]>(bytes ? bytes : 1));
        return buffers.back().get();
    }

    const int rank, size;
    std::vector<Round> rounds;
    std::vector<std::unique_ptr<char[]>> buffers;
};

}  // namespace msg
