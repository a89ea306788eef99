// The commit, after phase 3b (or the river sort): every output is complete under a temporary
// name, so each node checks that its input is as it was at the check and renames its output
// into place, then syncs the directory. The outputs stay tracked, so an abort still removes them,
// until the monitor's final word (phases/finish.cpp).
#include <chrono>
#include <mutex>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

void node_commit(Node &n, const Order &o) {
    n.set_progress("commit", 0, 0);
    // An input changed since the check fails the job here, before any output is in place
    // (the monitor then aborts, and outputs other nodes renamed are removed with the rest).
    Status s = n.pending_output.empty() ? Status::error("nothing to commit: no merged output")
                                        : check_input_unchanged(n.input, n.input_at_start);
    if (s) s = cleanup::commit(n.pending_output, n.output);
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    n.pending_output.clear();
    n.committed = true;
    // A signal from now on waits (bounded) for the final word, which is on its way.
    cleanup::set_interrupt_hook([word = n.final_word, stall = n.opts.stall_ms] {
        std::unique_lock<std::mutex> lk(word->mu);
        word->cv.wait_for(lk, std::chrono::milliseconds(stall), [&] { return word->heard; });
    });
    rio_reply(n.rio, o.in, RIO_OK, nullptr, 0);
}

Status monitor_commit(Monitor &m) {
    return m.failure(m.ask_all(kCmdCommit, RIO_TARGET_WORKER, nullptr, 4096), "commit");
}

}  // namespace sortapp::cluster
