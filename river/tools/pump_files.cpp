// Input, output and the clean-up of a temporary output on failure or signal.
#include "pump_files.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "viaduct/path.hpp"
#include "viaduct/reserve.hpp"
#include "viaduct/safe_file.hpp"

namespace pump {

namespace {

// The temporary output a stopping signal removes (one per process).
char g_temp[4096];
std::atomic<bool> g_armed{false};

void on_signal(int sig) {
    if (g_armed.load()) unlink(g_temp);
    signal(sig, SIG_DFL);
    raise(sig);
}

void arm(const std::string &path) {
    std::snprintf(g_temp, sizeof g_temp, "%s", path.c_str());
    g_armed.store(true);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, nullptr);
    }
}

std::string errno_text(const std::string &what, int err) {
    return what + ": " + std::strerror(err);
}

}  // namespace

bool open_input(const std::string &path, bool direct, int *fd, bool *is_direct, Meta *m,
                std::string *why) {
    *fd = direct ? open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT) : -1;
    *is_direct = *fd >= 0;
    if (*fd < 0) *fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        *why = errno_text("cannot open " + path, errno);
        return false;
    }
    struct stat st {};
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = path + " is not a regular file";
        close(*fd);
        *fd = -1;
        return false;
    }
    if (!*is_direct) posix_fadvise(*fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    m->size = static_cast<uint64_t>(st.st_size);
    m->mode = static_cast<uint32_t>(st.st_mode & 07777);
    m->dev = static_cast<uint64_t>(st.st_dev);
    m->ino = static_cast<uint64_t>(st.st_ino);
    return true;
}

std::string refuse_output(const std::string &path, const Meta &m) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
        return errno == ENOENT ? "" : errno_text("cannot reach " + path, errno);
    if (S_ISDIR(st.st_mode)) return path + " is a directory";
    if (boot_id() == m.boot_id && static_cast<uint64_t>(st.st_dev) == m.dev &&
        static_cast<uint64_t>(st.st_ino) == m.ino)
        return "refusing to overwrite the input: " + path + " is the file being copied";
    return "";
}

PendingOutput::~PendingOutput() {
    if (fd_ >= 0) close(fd_);
    if (!temp_.empty() && !committed_) {
        g_armed.store(false);
        unlink(temp_.c_str());
    }
}

bool PendingOutput::create(const std::string &path, uint32_t mode, bool direct, std::string *why) {
    path_ = path;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string name = (slash == std::string::npos ? "" : dir) + "." + base + ".datapump-XXXXXX";
    // A directory that cannot be opened is named by mkostemp below; one that can must be one
    // no other user can change.
    const std::string unsafe =
        viaduct::dir_refusal(viaduct::path_dir(path), viaduct::DirTrust::shared);
    if (!unsafe.empty()) {
        *why = "not writing " + path + ": " + unsafe;
        return false;
    }
    // No stopping signal between the file's creation and the handler knowing its name.
    sigset_t stopping, old;
    sigemptyset(&stopping);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stopping, sig);
    pthread_sigmask(SIG_BLOCK, &stopping, &old);
    fd_ = mkostemp(name.data(), O_CLOEXEC);
    const int err = errno;
    if (fd_ >= 0) arm(name);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (fd_ < 0) {
        *why = errno_text("cannot create a temporary file in " + dir, err);
        return false;
    }
    temp_ = name;
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, static_cast<mode_t>(mode & 0777 & ~mask));
    if (direct) {
        const int flags = fcntl(fd_, F_GETFL);
        direct_ = flags >= 0 && fcntl(fd_, F_SETFL, flags | O_DIRECT) == 0;
    }
    return true;
}

bool PendingOutput::reserve(uint64_t bytes, std::string *why) {
    const int err = viaduct::reserve_space(fd_, bytes);
    if (err == 0) return true;
    *why = errno_text("reserving " + std::to_string(bytes) + " bytes for " + path_, err);
    return false;
}

bool PendingOutput::set_buffered(std::string *why) {
    if (!direct_) return true;
    const int flags = fcntl(fd_, F_GETFL);
    if (flags < 0 || fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) {
        *why = errno_text("clearing O_DIRECT on " + temp_, errno);
        return false;
    }
    direct_ = false;
    return true;
}

bool PendingOutput::commit(std::string *why) {
    if (fdatasync(fd_) != 0) {
        *why = errno_text("flushing " + temp_, errno);
        return false;
    }
    if (rename(temp_.c_str(), path_.c_str()) != 0) {
        *why = errno_text("renaming " + temp_ + " to " + path_, errno);
        return false;
    }
    committed_ = true;
    g_armed.store(false);
    // The copy is done only once the rename is durable (a power loss can otherwise undo it);
    // an output that may not survive is not left looking like a good one.
    const std::string dir = viaduct::path_dir(path_);
    if (const int err = viaduct::fsync_dir(dir)) {
        *why = errno_text("syncing the directory " + dir + " after renaming " + path_, err);
        unlink(path_.c_str());
        return false;
    }
    return true;
}

}  // namespace pump
