// The process's registry of files to remove on failure, and its signal thread (see cleanup.hpp).
#include "sortapp/cleanup.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

namespace sortapp::cleanup {

namespace {

struct Registry {
    std::mutex mu;
    std::set<std::string> paths;
    bool tearing_down = false;
    std::mutex hook_mu;
    std::function<void()> hook;
};

Registry &registry() {
    static Registry *r = new Registry;  // never destroyed: other threads may use it at exit
    return *r;
}

void remove_path(const std::string &path) {
    // Symbolic links are removed, never followed: only what the process made goes.
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

// Under the registry's lock: from now on nothing is committed, and everything goes.
void tear_down_locked(Registry &r) {
    r.tearing_down = true;
    for (const std::string &p : r.paths) remove_path(p);
    r.paths.clear();
}

}  // namespace

void track(const std::string &path) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    r.paths.insert(path);
}

Status create(const std::function<Status(std::string &path)> &make) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    if (r.tearing_down) return Status::error("not creating files: the process is stopping");
    std::string path;
    Status st = make(path);
    if (st.is_ok() && !path.empty()) r.paths.insert(path);
    return st;
}

void untrack(const std::string &path) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    r.paths.erase(path);
}

void remove(const std::string &path) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    remove_path(path);
    r.paths.erase(path);
}

Status commit(const std::string &from, const std::string &to) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    if (r.tearing_down) return Status::error("not committing " + to + ": the process is stopping");
    if (::rename(from.c_str(), to.c_str()) != 0)
        return Status::from_errno("cannot rename " + from + " to " + to, errno);
    r.paths.erase(from);
    r.paths.insert(to);
    // Not done until the rename is durable: without the directory's fsync a power loss can
    // leave no output after the job said it was sorted.
    const std::string dir = viaduct::path_dir(to);
    if (const int err = viaduct::fsync_dir(dir))
        return Status::from_errno("cannot sync the directory " + dir + " after renaming " + to,
                                  err);
    return Status::ok();
}

void remove_all() {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    for (const std::string &p : r.paths) remove_path(p);
    r.paths.clear();
}

void abort_process(int code, const std::string &message) {
    Registry &r = registry();
    {
        std::lock_guard<std::mutex> lk(r.mu);
        tear_down_locked(r);
        if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
        std::fflush(stderr);
        std::fflush(stdout);
        // Still under the lock: no thread can commit between the removal and the end.
        ::_exit(code);
    }
}

void set_interrupt_hook(std::function<void()> hook) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.hook_mu);
    r.hook = std::move(hook);
}

void install_signal_cleanup(std::function<std::string()> describe) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set, describe = std::move(describe)]() {
        int sig = 0;
        while (sigwait(&set, &sig) != 0) {
        }
        Registry &r = registry();
        std::function<void()> hook;
        {
            std::lock_guard<std::mutex> hk(r.hook_mu);
            hook = r.hook;
        }
        if (hook) hook();
        std::lock_guard<std::mutex> lk(r.mu);
        tear_down_locked(r);
        std::fprintf(stderr, "%s: interrupted by SIG%s\n", describe().c_str(), sigabbrev_np(sig));
        std::fflush(stderr);
        // End by the signal itself, so the parent sees what happened.
        ::signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        ::raise(sig);
        ::_exit(128 + sig);
    }).detach();
}

}  // namespace sortapp::cleanup
