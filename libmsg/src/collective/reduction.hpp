// A reduction as the collectives apply it: an element type and a built-in
// operation, or the caller's function (msg_reduction_create).
#pragma once

#include <cstddef>

#include "msg/msg.h"

namespace msg {

struct Reduction {
    int datatype = 0;
    int op = 0;                  // enum msg_reduction, or a user code
    msg_reduce_fn fn = nullptr;  // set for a user reduction
    void *arg = nullptr;
    size_t element_size() const;
    // inout[i] = in[i] op inout[i], count elements.
    void apply(const void *in, void *inout, size_t count) const;
};

// Bytes of one element of datatype, 0 for a type that is none.
size_t datatype_size(int datatype);
// MSG_OK if the built-in op applies to datatype (band and bor: integers only).
int check_builtin(int datatype, int op);

}  // namespace msg
