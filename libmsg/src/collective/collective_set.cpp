// The collectives of one context: numbering, running, failing, and the
// registry of user reductions.
#include "collective/collective_set.hpp"

#include <algorithm>

namespace msg {

int CollectiveSet::start(Engine &engine, std::unique_ptr<Schedule> schedule,
                         Collective::Report report) {
    host_.engine = &engine;
    host_.drain = &drain_;
    const uint64_t seq = next_seq_++;
    const int tag = MSG_TAG_COLLECTIVE_FIRST + static_cast<int>(seq % kTags);
    report.seq = seq;
    if (engine.failed_peers() > 0) {
        // Peers that started it before hearing of the failure may send to us:
        // the same cleaning as a collective failing midway, with no report.
        report.sink = nullptr;
        Collective refused(host_, tag, std::move(schedule), report);
        refused.fail(MSG_ERR_PEER_FAILED);
        return MSG_ERR_PEER_FAILED;
    }
    std::unique_ptr<Collective> c;
    if (spare_.empty()) {
        c = std::make_unique<Collective>(host_, tag, std::move(schedule), report);
    } else {
        c = std::move(spare_.back());
        spare_.pop_back();
        c->reset(tag, std::move(schedule), report);
    }
    c->queued = true;
    host_.ready.push_back(c.get());
    active_.push_back(std::move(c));
    return MSG_OK;
}

std::unique_ptr<Schedule> CollectiveSet::new_schedule(int rank, int size) {
    {
        std::lock_guard<std::mutex> lk(schedules_mu_);
        if (!schedules_.empty()) {
            std::unique_ptr<Schedule> s = std::move(schedules_.back());
            schedules_.pop_back();
            s->rank = rank;
            s->size = size;
            return s;
        }
    }
    return std::make_unique<Schedule>(rank, size);
}

void CollectiveSet::finished(Collective *c) {
    auto it =
        std::find_if(active_.begin(), active_.end(), [c](const auto &p) { return p.get() == c; });
    std::unique_ptr<Collective> done = std::move(*it);
    active_.erase(it);
    // Emptied now, so that a kept schedule holds neither large scratch nor
    // what its rounds' work captured until the next collective.
    std::unique_ptr<Schedule> s = done->take_schedule();
    s->clear();
    {
        std::lock_guard<std::mutex> lk(schedules_mu_);
        if (schedules_.size() < kKept) schedules_.push_back(std::move(s));
    }
    if (spare_.size() < kKept) spare_.push_back(std::move(done));
}

void CollectiveSet::run() {
    while (!host_.ready.empty()) {
        Collective *c = host_.ready.front();
        host_.ready.pop_front();
        c->queued = false;
        if (c->advance()) finished(c);
    }
}

void CollectiveSet::peer_failed() {
    for (auto &c : active_) {
        if (c->failed()) continue;
        c->fail(MSG_ERR_PEER_FAILED);
        if (!c->queued) {
            c->queued = true;
            host_.ready.push_back(c.get());
        }
    }
    run();
}

int CollectiveSet::create_reduction(msg_reduce_fn fn, void *arg, int *op) {
    std::lock_guard<std::mutex> lk(reductions_mu_);
    size_t i = 0;
    while (i < reductions_.size() && reductions_[i].fn != nullptr) ++i;
    if (i == reductions_.size()) reductions_.emplace_back();
    reductions_[i] = {fn, arg};
    *op = kUserReductionFirst + static_cast<int>(i);
    return MSG_OK;
}

int CollectiveSet::free_reduction(int op) {
    std::lock_guard<std::mutex> lk(reductions_mu_);
    const long i = static_cast<long>(op) - kUserReductionFirst;
    if (i < 0 || static_cast<size_t>(i) >= reductions_.size() ||
        reductions_[static_cast<size_t>(i)].fn == nullptr)
        return MSG_ERR_INVALID_ARG;
    reductions_[static_cast<size_t>(i)] = {};
    return MSG_OK;
}

int CollectiveSet::find_reduction(int datatype, int op, Reduction *out) const {
    if (datatype_size(datatype) == 0) return MSG_ERR_INVALID_ARG;
    *out = Reduction{datatype, op, nullptr, nullptr};
    if (op < kUserReductionFirst) return check_builtin(datatype, op);
    std::lock_guard<std::mutex> lk(reductions_mu_);
    const size_t i = static_cast<size_t>(op - kUserReductionFirst);
    if (i >= reductions_.size() || reductions_[i].fn == nullptr) return MSG_ERR_INVALID_ARG;
    out->fn = reductions_[i].fn;
    out->arg = reductions_[i].arg;
    return MSG_OK;
}

}  // namespace msg
