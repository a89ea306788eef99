// Creating and publishing files where another local user cannot redirect them: directories
// opened once and checked by owner and mode, files made relative to that descriptor with
// O_EXCL | O_NOFOLLOW under names no one can guess, modes under the umask, and results
// published by rename plus an fsync of the directory (without it a power loss can undo the
// rename after the program said it was done).
#pragma once

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "viaduct/path.hpp"

namespace viaduct {

// A file descriptor closed with its owner.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
    UniqueFd &operator=(UniqueFd &&o) noexcept {
        if (this != &o) reset(o.release());
        return *this;
    }
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    ~UniqueFd() { reset(); }
    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

  private:
    int fd_ = -1;
};

// The process's umask, read without changing it (Linux shows it in /proc/self/status); set
// and restored at once only where that cannot be read.
inline mode_t current_umask() {
    if (FILE *f = std::fopen("/proc/self/status", "re")) {
        char line[256];
        unsigned mask = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f) != nullptr)
            found = std::sscanf(line, "Umask: %o", &mask) == 1;
        std::fclose(f);
        if (found) return static_cast<mode_t>(mask & 0777);
    }
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
}

// The mode a new file gets, as open(2) would give it: `wanted` less the umask (0666 for
// outputs, as `sort -o` and `cp` create them).
inline mode_t umask_mode(mode_t wanted = 0666) {
    return static_cast<mode_t>(wanted & ~current_umask() & 0777);
}

enum class DirTrust {
    // Owned by this user and writable by no one else (a cache, a key).
    private_to_user,
    // Owned by this user or by root, and writable by other users only with the sticky bit (as
    // /tmp): no one else can rename, remove or replace what this process puts there.
    shared,
};

// "" when the directory open as `fd` is safe to create files in; else why not.
inline std::string dir_unsafe_reason(int fd, const std::string &dir, DirTrust trust) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return "cannot stat " + dir + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
    const uid_t me = ::geteuid();
    const bool private_dir = trust == DirTrust::private_to_user;
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    if (st.st_uid != me && (private_dir || st.st_uid != 0))
        return dir + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
    if (private_dir && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return dir + " is writable by other users (mode " + mode + ")";
    if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)
        return dir + " is writable by every user and not sticky (mode " + mode + ")";
    return "";
}

// Opens `dir` (symbolic links in it are followed: the directory reached is the one checked)
// and checks it; an invalid fd and `why` when it cannot be opened or is not safe.
inline UniqueFd open_checked_dir(const std::string &dir, DirTrust trust, std::string &why) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
        why = "cannot open the directory " + dir + ": " + std::strerror(errno);
        return fd;
    }
    why = dir_unsafe_reason(fd.get(), dir, trust);
    if (!why.empty()) fd.reset();
    return fd;
}

// Why files must not be created in `dir` ("" when they may): for a directory that opens but is
// not safe. One that cannot be opened gives "" too, so that the creation that follows names
// the real problem ("No such file or directory") as it would anyway.
inline std::string dir_refusal(const std::string &dir, DirTrust trust) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return fd.valid() ? dir_unsafe_reason(fd.get(), dir, trust) : "";
}

// Makes `dir` and its missing parents, each new one private (0700); then opens and checks it
// as private. An invalid fd and `why` when that fails.
inline UniqueFd make_private_dir(const std::string &dir, std::string &why) {
    for (std::size_t p = 1; p <= dir.size(); ++p)
        if (p == dir.size() || dir[p] == '/') ::mkdir(dir.substr(0, p).c_str(), 0700);
    return open_checked_dir(dir, DirTrust::private_to_user, why);
}

// Creates a new file in the directory open as `dir_fd`, as mkstemp(3) does, but relative to
// that descriptor: "<prefix>XXXXXX" with six random characters, O_CREAT | O_EXCL | O_NOFOLLOW,
// so it is never an existing file nor reached through a link. The fd (and `name`), or -1 with
// errno set.
inline int create_temp_at(int dir_fd, const std::string &prefix, mode_t mode, std::string &name,
                          int extra_flags = 0) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int attempt = 0; attempt < 100; ++attempt) {
        unsigned char r[6];
        if (::getrandom(r, sizeof r, 0) != ssize_t(sizeof r)) return -1;
        name = prefix;
        for (unsigned char c : r) name += letters[c % (sizeof letters - 1)];
        const int fd =
            ::openat(dir_fd, name.c_str(),
                     O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

// 0 once the directory `dir` is on stable storage (a rename in it survives a power loss); else
// the errno. File systems that cannot sync a directory (EINVAL) count as done.
inline int fsync_dir(const std::string &dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return errno;
    if (::fsync(fd.get()) != 0 && errno != EINVAL) return errno;
    return 0;
}

// Publishes `from` as `to`, both in the directory open as `dir_fd`: rename, then the
// directory's fsync. 0 or the errno.
inline int publish_at(int dir_fd, const std::string &from, const std::string &to) {
    if (::renameat(dir_fd, from.c_str(), dir_fd, to.c_str()) != 0) return errno;
    if (::fsync(dir_fd) != 0 && errno != EINVAL) return errno;
    return 0;
}

// Writes `text` as the file `name` in the directory open as `dir_fd` (whose path, `dir`, is for
// messages), whole or not at all: a fresh temporary beside it (never through a link), synced,
// renamed over `name`, and the directory synced. The file gets `mode` less the umask. "" when
// done, else why not; nothing is left behind on failure.
inline std::string write_file_at(int dir_fd, const std::string &dir, const std::string &name,
                                 const std::string &text, mode_t mode = 0666) {
    std::string tmp;
    UniqueFd fd(create_temp_at(dir_fd, "." + name + ".", 0600, tmp));
    if (!fd.valid())
        return "cannot create a temporary file in " + dir + ": " + std::strerror(errno);
    bool ok = ::fchmod(fd.get(), umask_mode(mode)) == 0;
    for (std::size_t put = 0; ok && put < text.size();) {
        const ssize_t n = ::write(fd.get(), text.data() + put, text.size() - put);
        ok = n > 0;
        put += ok ? std::size_t(n) : 0;
    }
    int err = ok && ::fdatasync(fd.get()) == 0 ? 0 : (errno != 0 ? errno : EIO);
    if (err == 0) err = publish_at(dir_fd, tmp, name);
    if (err == 0) return "";
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return "cannot write " + dir + "/" + name + ": " + std::strerror(err);
}

// write_file_at for the file `path`, in its directory, which is refused when another user owns
// it or may change it (DirTrust::shared).
inline std::string write_file_atomically(const std::string &path, const std::string &text,
                                         mode_t mode = 0666) {
    const PathParts where = split_path(path);
    std::string why;
    UniqueFd dir_fd = open_checked_dir(where.dir, DirTrust::shared, why);
    if (!dir_fd.valid()) return "not writing " + path + ": " + why;
    return write_file_at(dir_fd.get(), where.dir, where.base, text, mode);
}

}  // namespace viaduct
