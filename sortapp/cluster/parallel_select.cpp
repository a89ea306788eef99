// Phase 3a's exact parallel selection (see parallel_select.hpp).
#include "parallel_select.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sortapp::cluster {

namespace {

bool less(const Element &a, const Element &b) {
    return compare(a, b) < 0;
}

// Records of `node` in [lo, hi) that precede e, plus lo: binary search on the
// (sorted) source, comparing in the global order.
uint64_t count_below(const SortedSource &src, uint32_t node, const Element &e, uint64_t lo,
                     uint64_t hi) {
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        Element m{src.key(mid), node, mid};
        if (less(m, e))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

}  // namespace

SampleReply answer_samples(const SortedSource &src, uint32_t node, const SampleRequest &req) {
    SampleReply reply;
    reply.per_split.resize(req.windows.size());
    for (size_t j = 0; j < req.windows.size(); ++j) {
        Window w = req.windows[j];
        if (w.hi > src.size() || w.lo > w.hi)
            throw std::invalid_argument("window outside the file");
        uint64_t width = w.hi - w.lo;
        auto &out = reply.per_split[j];
        bool whole = j < req.whole.size() && req.whole[j];
        if (whole || width <= req.samples) {
            for (uint64_t p = w.lo; p < w.hi; ++p) out.push_back({src.key(p), node, p});
        } else {
            // Evenly spaced from the window's first record, and its last.
            for (uint32_t m = 0; m < req.samples; ++m) {
                uint64_t p = w.lo + width * m / req.samples;
                out.push_back({src.key(p), node, p});
            }
            out.push_back({src.key(w.hi - 1), node, w.hi - 1});
        }
    }
    return reply;
}

CountReply answer_counts(const SortedSource &src, uint32_t node, const CountRequest &req) {
    CountReply reply;
    reply.counts.resize(req.pivots.size());
    for (size_t j = 0; j < req.pivots.size(); ++j) {
        Window w = j < req.windows.size() ? req.windows[j] : Window{0, src.size()};
        if (w.hi > src.size() || w.lo > w.hi)
            throw std::invalid_argument("window outside the file");
        for (const Element &e : req.pivots[j]) {
            // The count over the whole file: below the window everything
            // precedes the pivot only if the pivot is past the window's start;
            // the windows guarantee that, so searching inside them is enough.
            reply.counts[j].push_back(count_below(src, node, e, w.lo, w.hi));
        }
    }
    return reply;
}

Selector::Selector(std::vector<uint64_t> sizes, uint32_t parts, uint32_t samples)
    : sizes_(std::move(sizes)), parts_(parts), samples_(samples) {
    if (parts_ == 0) throw std::invalid_argument("at least one partition");
    if (samples_ == 0) {
        // Enough samples that each round shrinks the windows several times
        // over, few enough that a round's messages stay small.
        uint64_t k = 16 * static_cast<uint64_t>(sizes_.size());
        samples_ = static_cast<uint32_t>(std::clamp<uint64_t>(k, 64, 1024));
    }
    uint64_t total = 0;
    for (uint64_t n : sizes_) total += n;
    for (uint32_t j = 1; j < parts_; ++j) {
        Split s;
        // floor(total * j / parts) without overflow.
        s.target = (total / parts_) * j + (total % parts_) * j / parts_;
        for (uint64_t n : sizes_) s.windows.push_back({0, n});
        splits_.push_back(std::move(s));
    }
    for (Split &s : splits_) resolve_exactly(s);  // trivial cases: empty nodes, targets 0 or total
}

uint64_t Selector::target(uint32_t split) const {
    return splits_.at(split - 1).target;
}

bool Selector::done() const {
    for (const Split &s : splits_)
        if (!s.resolved) return false;
    return true;
}

SampleRequest Selector::sample_request(uint32_t node) const {
    SampleRequest r;
    r.samples = samples_;
    for (const Split &s : splits_) {
        r.windows.push_back(s.resolved ? Window{s.windows[node].lo, s.windows[node].lo}
                                       : s.windows[node]);
        r.whole.push_back(s.whole && !s.resolved ? 1 : 0);
    }
    return r;
}

Status Selector::check_samples(uint32_t node, const SampleReply &reply) const {
    if (node >= sizes_.size()) return Status::error("samples from a node outside the job");
    if (reply.per_split.size() != splits_.size())
        return Status::error("sample reply for the wrong number of splits");
    for (size_t j = 0; j < splits_.size(); ++j) {
        const Window &w = splits_[j].windows[node];
        for (const Element &e : reply.per_split[j])
            if (e.node != node || e.pos < w.lo || e.pos >= w.hi)
                return Status::error("a sample outside its window");
    }
    return Status::ok();
}

void Selector::take_samples(uint32_t node, const SampleReply &reply) {
    if (Status s = check_samples(node, reply); !s) throw std::invalid_argument(s.message());
    for (size_t j = 0; j < splits_.size(); ++j) {
        Split &s = splits_[j];
        if (s.samples.size() != sizes_.size()) s.samples.assign(sizes_.size(), {});
        s.samples[node] = reply.per_split[j];
    }
}

// Each sample's rank inside the windows is bracketed by the samples of every
// node around it: from below by the node's last sample before it (which has
// pos - lo + 1 records at or before it), from above by the node's first one
// after it. One sweep over all the split's samples in the global order keeps
// both sums as it passes each node's samples. *lo gets the last sample sure
// to lie at or before the boundary's rank t, *hi the first sure to lie at or
// after it.
void Selector::bracket_samples(const Split &s, uint64_t t, const Element **lo,
                               const Element **hi) const {
    const size_t n = sizes_.size();
    // Each sample with the node whose list it is in (not the node it names).
    std::vector<std::pair<const Element *, size_t>> all;
    for (size_t q = 0; q < n; ++q)
        for (const Element &e : s.samples[q]) all.emplace_back(&e, q);
    std::stable_sort(all.begin(), all.end(),
                     [](const auto &a, const auto &b) { return less(*a.first, *b.first); });
    // Node i's share of the bounds when c of its samples precede the one at hand.
    auto below = [&](size_t i, size_t c) {
        return c == 0 ? 0 : s.samples[i][c - 1].pos - s.windows[i].lo + 1;
    };
    auto above = [&](size_t i, size_t c) {
        const auto &smp = s.samples[i];
        return c == smp.size() ? s.windows[i].hi - s.windows[i].lo : smp[c].pos - s.windows[i].lo;
    };
    std::vector<size_t> before(n, 0);
    uint64_t r_lo = 0, r_hi = 0;
    for (size_t i = 0; i < n; ++i) r_hi += above(i, 0);
    for (const auto &[e, q] : all) {
        if (r_hi <= t) *lo = e;
        if (r_lo >= t && *hi == nullptr) *hi = e;
        r_lo += below(q, before[q] + 1) - below(q, before[q]);
        r_hi = r_hi - above(q, before[q]) + above(q, before[q] + 1);
        ++before[q];
    }
}

void Selector::choose_pivots() {
    ++rounds_;
    for (Split &s : splits_) {
        s.pivots.clear();
        if (s.resolved) continue;
        // Whole windows in hand: finish by merging.
        bool whole = true;
        for (size_t i = 0; i < sizes_.size(); ++i)
            if (s.samples[i].size() != s.windows[i].hi - s.windows[i].lo) whole = false;
        if (whole) {
            resolve_exactly(s);
            continue;
        }
        uint64_t below = 0;  // records before every window
        for (const Window &w : s.windows) below += w.lo;
        const Element *best_lo = nullptr, *best_hi = nullptr;
        bracket_samples(s, s.target - below, &best_lo, &best_hi);
        if (best_lo != nullptr) s.pivots.push_back(*best_lo);
        if (best_hi != nullptr && (best_lo == nullptr || compare(*best_hi, *best_lo) != 0))
            s.pivots.push_back(*best_hi);
        s.pivot_counts.assign(s.pivots.size(), std::vector<uint64_t>(sizes_.size(), 0));
    }
}

CountRequest Selector::count_request(uint32_t node) const {
    CountRequest r;
    for (const Split &s : splits_) {
        r.windows.push_back(s.windows[node]);
        r.pivots.push_back(s.pivots);
    }
    return r;
}

Status Selector::check_counts(uint32_t node, const CountReply &reply) const {
    if (node >= sizes_.size()) return Status::error("counts from a node outside the job");
    if (reply.counts.size() != splits_.size())
        return Status::error("count reply for the wrong number of splits");
    for (size_t j = 0; j < splits_.size(); ++j) {
        const Split &s = splits_[j];
        if (reply.counts[j].size() != s.pivots.size())
            return Status::error("count reply for the wrong number of pivots");
        for (uint64_t c : reply.counts[j])
            if (c < s.windows[node].lo || c > s.windows[node].hi)
                return Status::error("a count outside its window");
    }
    return Status::ok();
}

void Selector::take_counts(uint32_t node, const CountReply &reply) {
    if (Status s = check_counts(node, reply); !s) throw std::invalid_argument(s.message());
    for (size_t j = 0; j < splits_.size(); ++j) {
        Split &s = splits_[j];
        for (size_t k = 0; k < s.pivots.size(); ++k) s.pivot_counts[k][node] = reply.counts[j][k];
    }
    // The last node's counts close the round: move the windows.
    if (node + 1 != sizes_.size()) return;
    for (Split &s : splits_) {
        const std::vector<Window> before = s.windows;
        for (size_t k = 0; k < s.pivots.size(); ++k) {
            uint64_t rank = 0;
            for (uint64_t c : s.pivot_counts[k]) rank += c;
            // A pivot with rank <= target lies at or before the boundary in
            // every node; one with rank >= target at or after it.
            for (size_t i = 0; i < sizes_.size(); ++i) {
                uint64_t c = s.pivot_counts[k][i];
                if (rank <= s.target) s.windows[i].lo = std::max(s.windows[i].lo, c);
                if (rank >= s.target) s.windows[i].hi = std::min(s.windows[i].hi, c);
            }
        }
        s.pivots.clear();
        if (!s.resolved) resolve_exactly(s);
        // Samples too coarse to move anything (small, lopsided windows): the
        // next round takes the windows whole, which always finishes the split.
        bool moved = false;
        for (size_t i = 0; i < sizes_.size(); ++i)
            if (s.windows[i].lo != before[i].lo || s.windows[i].hi != before[i].hi) moved = true;
        if (!s.resolved && !moved) s.whole = true;
    }
}

// Resolves a split whose windows are closed or whose window contents are all
// known (samples covering them whole); otherwise leaves it.
void Selector::resolve_exactly(Split &s) {
    uint64_t below = 0, width = 0;
    for (const Window &w : s.windows) {
        below += w.lo;
        width += w.hi - w.lo;
    }
    if (width == 0 || s.target == below) {
        for (Window &w : s.windows) w.hi = w.lo;
        s.resolved = true;
        return;
    }
    if (s.target == below + width) {
        for (Window &w : s.windows) w.lo = w.hi;
        s.resolved = true;
        return;
    }
    if (s.samples.size() != sizes_.size()) return;
    std::vector<Element> all;
    for (size_t i = 0; i < sizes_.size(); ++i) {
        if (s.samples[i].size() != s.windows[i].hi - s.windows[i].lo) return;
        all.insert(all.end(), s.samples[i].begin(), s.samples[i].end());
    }
    std::sort(all.begin(), all.end(), less);
    const uint64_t t = s.target - below;
    std::vector<uint64_t> take(sizes_.size(), 0);
    for (uint64_t r = 0; r < t; ++r) ++take[all[r].node];
    for (size_t i = 0; i < sizes_.size(); ++i)
        s.windows[i].lo = s.windows[i].hi = s.windows[i].lo + take[i];
    s.resolved = true;
}

std::vector<std::vector<uint64_t>> Selector::starts() const {
    std::vector<std::vector<uint64_t>> out;
    out.push_back(std::vector<uint64_t>(sizes_.size(), 0));
    for (const Split &s : splits_) {
        std::vector<uint64_t> row;
        for (const Window &w : s.windows) row.push_back(w.lo);
        out.push_back(std::move(row));
    }
    out.push_back(sizes_);
    return out;
}

std::vector<std::vector<uint64_t>> select_local(const std::vector<const SortedSource *> &nodes,
                                                uint32_t parts, unsigned *rounds) {
    std::vector<uint64_t> sizes;
    for (const SortedSource *n : nodes) sizes.push_back(n->size());
    Selector sel(sizes, parts);
    while (!sel.done()) {
        for (uint32_t i = 0; i < nodes.size(); ++i)
            sel.take_samples(i, answer_samples(*nodes[i], i, sel.sample_request(i)));
        sel.choose_pivots();
        if (sel.done()) break;
        for (uint32_t i = 0; i < nodes.size(); ++i)
            sel.take_counts(i, answer_counts(*nodes[i], i, sel.count_request(i)));
    }
    if (rounds != nullptr) *rounds = sel.rounds();
    return sel.starts();
}

}  // namespace sortapp::cluster
