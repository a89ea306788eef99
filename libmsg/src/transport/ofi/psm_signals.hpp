// libfabric links PSM (libpsm_infinipath, libinfinipath), whose library
// constructor installs handlers for SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGINT
// and SIGTERM in every process that loads it: each writes a *.btr backtrace
// file into the working directory and exits with status 1, so a crash or a
// kill reads as an ordinary failure. These put back what was there before.
#pragma once

#include <dlfcn.h>
#include <signal.h>

#include <cstring>

namespace msg {

// True if the handler's code lives in one of the PSM libraries.
inline bool handler_is_psm(const struct sigaction &sa) {
    void *fn = (sa.sa_flags & SA_SIGINFO) ? reinterpret_cast<void *>(sa.sa_sigaction)
                                          : reinterpret_cast<void *>(sa.sa_handler);
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) return false;
    Dl_info info{};
    if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return false;
    const char *slash = std::strrchr(info.dli_fname, '/');
    const char *file = slash != nullptr ? slash + 1 : info.dli_fname;
    return std::strncmp(file, "libinfinipath", 13) == 0 || std::strncmp(file, "libpsm", 6) == 0;
}

// The signals PSM's constructor takes.
inline constexpr int kPsmSignals[] = {SIGSEGV, SIGABRT, SIGBUS,  SIGILL,  SIGFPE,
                                      SIGINT,  SIGTERM, SIGQUIT, SIGTRAP, SIGSYS};

// Sets every signal whose handler belongs to PSM to *replacement(index);
// handlers of the application or of any other library are left alone.
// Returns how many were replaced.
template <typename Replacement>
int replace_psm_handlers(Replacement replacement) {
    int replaced = 0;
    int i = 0;
    for (int sig : kPsmSignals) {
        struct sigaction now {};
        const int index = i++;
        if (sigaction(sig, nullptr, &now) != 0 || !handler_is_psm(now)) continue;
        if (sigaction(sig, replacement(index), nullptr) == 0) ++replaced;
    }
    return replaced;
}

// Restores the default action of every signal whose handler belongs to PSM.
inline int restore_psm_signal_defaults() {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    return replace_psm_handlers([&](int) { return &dfl; });
}

// The handlers in force when taken; put_back_over_psm() reinstates them
// wherever PSM has since put its own (a load of libfabric at run time, after
// the program installed its handlers).
class PsmSignalSnapshot {
  public:
    PsmSignalSnapshot() {
        int i = 0;
        for (int sig : kPsmSignals) sigaction(sig, nullptr, &saved_[i++]);
    }
    int put_back_over_psm() const {
        return replace_psm_handlers([this](int index) { return &saved_[index]; });
    }

  private:
    struct sigaction saved_[sizeof kPsmSignals / sizeof kPsmSignals[0]]{};
};

}  // namespace msg
