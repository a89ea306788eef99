// The signal handler that removes libmsg's /dev/shm names when a terminating
// signal ends the process during msg_init, and its bookkeeping: fixed slots,
// so the handler reads nothing that an allocation could be moving.
#include "transport/host/signal_unlink.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace msg {

namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr size_t kSlots = 16;
constexpr size_t kNameMax = 96;

struct Slot {
    std::atomic<bool> used{false};
    char name[kNameMax] = {};
};

Slot g_slots[kSlots];
// The actions our handler replaced, and whether it is installed, per signal.
struct sigaction g_replaced[NSIG];
std::atomic<bool> g_installed[NSIG];
std::mutex g_unlink_mu;  // registration only; never taken in the handler

void on_signal(int sig, siginfo_t *info, void *ucontext) {
    const int saved_errno = errno;  // the interrupted code's
    for (Slot &s : g_slots)
        if (s.used.load(std::memory_order_acquire)) shm_unlink(s.name);
    // What was there before us acts on the signal as if we had not been.
    const struct sigaction &before = g_replaced[sig];
    if (sigaction(sig, &before, nullptr) == 0) {
        g_installed[sig].store(false, std::memory_order_release);
        if ((before.sa_flags & SA_SIGINFO) != 0)
            before.sa_sigaction(sig, info, ucontext);
        else if (before.sa_handler != SIG_IGN)
            raise(sig);  // delivered once this handler returns (the signal is blocked in it)
    }
    errno = saved_errno;
}

void install_handlers() {
    for (int sig : kSignals) {
        if (g_installed[sig].load(std::memory_order_acquire)) continue;
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        g_replaced[sig] = old;
        struct sigaction sa {};
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, nullptr) == 0) g_installed[sig].store(true);
    }
}

// Only where our handler is still the one in place: a handler installed on
// top of it keeps its chain, which ends in ours and then the one before.
void remove_handlers() {
    for (int sig : kSignals) {
        if (!g_installed[sig].load(std::memory_order_acquire)) continue;
        struct sigaction now {};
        if (sigaction(sig, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) == 0 ||
            now.sa_sigaction != on_signal)
            continue;
        if (sigaction(sig, &g_replaced[sig], nullptr) == 0) g_installed[sig].store(false);
    }
}

}  // namespace

bool unlink_on_signal(const std::string &name) {
    if (name.empty() || name.size() >= kNameMax) return false;
    std::lock_guard<std::mutex> lk(g_unlink_mu);
    for (Slot &s : g_slots) {
        if (s.used.load(std::memory_order_relaxed)) continue;
        std::memcpy(s.name, name.c_str(), name.size() + 1);
        s.used.store(true, std::memory_order_release);
        install_handlers();
        return true;
    }
    return false;
}

void forget_on_signal(const std::string &name) {
    std::lock_guard<std::mutex> lk(g_unlink_mu);
    bool any = false;
    for (Slot &s : g_slots) {
        if (s.used.load(std::memory_order_relaxed) && name == s.name)
            s.used.store(false, std::memory_order_release);
        any = any || s.used.load(std::memory_order_relaxed);
    }
    if (!any) remove_handlers();
}

}  // namespace msg
