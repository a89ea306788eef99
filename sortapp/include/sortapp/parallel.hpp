// Runs fn(t) for t in [0, threads) on that many threads (the caller's being one of them): the
// sort's one way to split work over cores, in phase 1 and in the river sort alike.
#pragma once

#include <thread>
#include <vector>

namespace sortapp {

template <class Fn>
void parallel_run(unsigned threads, Fn &&fn) {
    if (threads <= 1) {
        fn(0u);
        return;
    }
    std::vector<std::jthread> helpers;
    helpers.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back([&fn, t] { fn(t); });
    fn(0u);
}

}  // namespace sortapp
