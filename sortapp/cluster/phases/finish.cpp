// The monitor's final word, after the commit (the last step of either algorithm): keep your output
// (every node committed) or remove everything. While the monitor says it, and while a node waits
// for it after its commit, a signal waits (bounded) so that the outputs are kept or lost together.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// Until it goes out of scope, a signal to the monitor waits (bounded) for it to.
class Saying {
  public:
    explicit Saying(int stall_ms) : state_(std::make_shared<State>()) {
        cleanup::set_interrupt_hook([s = state_, stall = stall_ms] {
            std::unique_lock<std::mutex> lk(s->mu);
            s->cv.wait_for(lk, std::chrono::milliseconds(stall), [&] { return s->said; });
        });
    }
    ~Saying() {
        {
            std::lock_guard<std::mutex> lk(state_->mu);
            state_->said = true;
        }
        state_->cv.notify_all();
        cleanup::set_interrupt_hook({});
    }
    Saying(const Saying &) = delete;
    Saying &operator=(const Saying &) = delete;

  private:
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        bool said = false;
    };
    std::shared_ptr<State> state_;
};

}  // namespace

void node_done(Node &n, const Order &o) {
    uint32_t abort_job = 1;
    if (o.info.len == sizeof abort_job) std::memcpy(&abort_job, o.info.data, sizeof abort_job);
    if (abort_job || !n.committed) {
        cleanup::remove_all();  // a failed job leaves nothing that could pass for its output
        n.job_dir.clear();
    } else {
        cleanup::untrack(n.output);
    }
    {
        std::lock_guard<std::mutex> lk(n.final_word->mu);
        n.final_word->heard = true;
    }
    n.final_word->cv.notify_all();
    rio_stats_t st{};
    rio_get_stats(n.rio, &st);
    PhaseFigures f;
    f.phase = "served";
    f.bytes_sent = st.bytes_read;
    reply(n.rio, o.in, f);
    n.exit_code = abort_job || !n.committed ? 1 : 0;
}

Status monitor_finish(Monitor &m) {
    // Every node has renamed its output: a signal now waits (bounded) until every node has
    // heard that the job succeeded, so the outputs are kept or lost together.
    Saying saying(2 * m.opts().stall_ms);
    uint32_t keep = 0;
    const char *flag = reinterpret_cast<const char *>(&keep);
    auto answers = m.ask_all(
        kCmdDone, RIO_TARGET_WORKER,
        [&](int) { return std::vector<char>(flag, flag + sizeof keep); }, 4096);
    m.job.served.assign(static_cast<size_t>(m.nodes()), {});
    for (size_t i = 0; i < answers.size(); ++i)
        if (answers[i].status == RIO_OK)
            decode(answers[i].data.data(), answers[i].data.size(), m.job.served[i]);
    return m.failure(answers, "finishing");
}

}  // namespace sortapp::cluster
