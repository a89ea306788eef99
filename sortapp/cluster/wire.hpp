// The vocabulary of the messages' field lists (messages.hpp): each message names its fields
// once, in wire order, in a `fields(message, visitor)` function that encode, decode and the
// size bound of codec.hpp all walk.
#pragma once

#include <concepts>
#include <type_traits>

namespace sortapp::cluster::wire {

// M is T or const T: one field list serves the encoder (const) and the decoder.
template <typename M, typename T>
concept Is = std::same_as<std::remove_const_t<M>, T>;

// Two lists of one length sent as one: a count, then entry j of each in turn. The encoder pads
// the second list with default values where it is shorter; the decoder gives both the count.
template <typename A, typename B>
struct Zip {
    A &first;
    B &second;
};

template <typename A, typename B>
Zip<A, B> zip(A &first, B &second) {
    return {first, second};
}

}  // namespace sortapp::cluster::wire
