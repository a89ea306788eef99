// libfabric links PSM (libpsm_infinipath, libinfinipath), whose library
// constructor installs handlers for SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGINT
// and SIGTERM in every process that loads it: each writes a *.btr backtrace
// file into the working directory and exits with status 1, so a crash or a
// kill reads as an ordinary failure. These put back the default action.
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

// Restores the default action of every signal whose handler belongs to PSM;
// handlers of the application or of any other library are left alone.
// Returns how many were restored.
inline int restore_psm_signal_defaults() {
    static const int kSignals[] = {SIGSEGV, SIGABRT, SIGBUS,  SIGILL,  SIGFPE,
                                   SIGINT,  SIGTERM, SIGQUIT, SIGTRAP, SIGSYS};
    int restored = 0;
    for (int sig : kSignals) {
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) != 0 || !handler_is_psm(old)) continue;
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        if (sigaction(sig, &dfl, nullptr) == 0) ++restored;
    }
    return restored;
}

}  // namespace msg
