// Opening a river (the hellos) and closing it (every peer's last word, then
// the receives withdrawn and every operation finished), and the CQ callback
// that routes each completion to the source or the sink end.
#pragma once

#include "handle.hpp"

namespace riv {

int open_river(msg_context_t *msg, const river_options_t &options, river **out);
// Frees the river, unless libmsg still holds operations on its buffers after
// the timeout: then it is left allocated (never freed under libmsg's feet).
int close_river(std::unique_ptr<river> r);

}  // namespace riv
