// Who this process is and what it is doing (for every message that names the node and the
// phase), and the watch a node keeps on the monitor: a monitor that exits or stops answering
// ends the node, with what it created removed, within the stall timeout.
#pragma once

#include <rio/rio.h>

#include <memory>
#include <string>

namespace sortapp::cluster {

void set_whereabouts(const std::string &who, const std::string &phase);
void set_phase(const std::string &phase);
// "node 2, phase 1" (or "sortapp job" before the role is known).
std::string whereabouts();

// The answer to kCmdPing, a shadow-thread handler: any answer says "still here".
void answer_ping(rio_t *rio, rio_incoming_t *in, void *arg);

// Asks `rank`'s shadow thread (kCmdPing) a question every stall_ms / 4 from a thread of its
// own. An answer that does not come within stall_ms, or a failed one (the process exited),
// ends this process through cleanup::abort_process with a message naming `what`.
class Watch {
  public:
    Watch(rio_t *rio, msg_context_t *msg, int rank, int stall_ms, std::string what);
    ~Watch();
    Watch(const Watch &) = delete;
    Watch &operator=(const Watch &) = delete;

  private:
    struct State;
    std::shared_ptr<State> state_;
};

}  // namespace sortapp::cluster
