// The timeline writer: checks (or makes) the output directory, writes the four files there as
// temporaries, the PNG drawn by gnuplot, and publishes them only once all four are complete.
#include "viaduct/timeline.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "timeline_detail.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

extern char **environ;

namespace viaduct::timeline {
namespace {

// A file being made in the output directory under a fresh temporary name (create_temp_at:
// never an existing file, never through a link), removed unless published.
class Staged {
  public:
    Staged(int dir_fd, const std::string &dir, const std::string &name)
        : dir_fd_(dir_fd), path_(dir + "/" + name), name_(name) {
        fd_.reset(create_temp_at(dir_fd, "." + name + ".", 0600, tmp_));
        if (!fd_.valid()) fail("cannot create a temporary file beside it", errno);
    }
    Staged(const Staged &) = delete;
    Staged &operator=(const Staged &) = delete;
    ~Staged() {
        if (!tmp_.empty()) ::unlinkat(dir_fd_, tmp_.c_str(), 0);
    }

    int fd() const { return fd_.get(); }
    const std::string &temp_name() const { return tmp_; }
    const std::string &path() const { return path_; }

    void put(const std::string &text) {
        for (std::size_t done = 0; done < text.size();) {
            const ssize_t n = ::write(fd_.get(), text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail("", n < 0 ? errno : EIO);
            done += static_cast<std::size_t>(n);
        }
    }
    // Gives the file its final mode (0666 less the umask, as an output file) and syncs it, so
    // that what the rename publishes is on storage.
    void finish() {
        if (::fchmod(fd_.get(), umask_mode(0666)) != 0) fail("", errno);
        if (::fdatasync(fd_.get()) != 0) fail("", errno);
    }
    void publish() {
        const int err = publish_at(dir_fd_, tmp_, name_);
        if (err != 0) fail("", err);
        tmp_.clear();
    }
    [[noreturn]] void fail(const std::string &what, int err) const {
        throw std::runtime_error("cannot write " + path_ + ": " +
                                 (what.empty() ? "" : what + ": ") + std::strerror(err));
    }

  private:
    int dir_fd_;
    std::string path_, name_, tmp_;
    UniqueFd fd_;
};

// Makes `dir` and its missing parents as mkdir -p does (0777 less the umask); "" or why not.
std::string make_dir(const std::string &dir) {
    int err = 0;
    for (std::size_t p = 1; p <= dir.size(); ++p)
        if (p == dir.size() || dir[p] == '/')
            err = ::mkdir(dir.substr(0, p).c_str(), 0777) == 0 || errno == EEXIST ? 0 : errno;
    return err == 0 ? "" : "cannot create the directory " + dir + ": " + std::strerror(err);
}

// The last few lines gnuplot printed, for the error that names it.
std::string tail_of(const std::string &out) {
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < out.size();) {
        std::size_t end = out.find('\n', at);
        if (end == std::string::npos) end = out.size();
        if (out.find_first_not_of(" \t\r^", at) < end) lines.push_back(out.substr(at, end - at));
        at = end + 1;
    }
    std::string t;
    for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
        t += (t.empty() ? "" : " / ") + lines[i];
    return t.empty() ? "" : ": " + t;
}

// Starts `gnuplot SCRIPT` in the directory open as `dir_fd`, stdin from /dev/null and its
// output into `out_fd`; the pid, or -1 with `why`.
pid_t spawn_gnuplot(int dir_fd, const std::string &script, int out_fd, std::string &why) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addfchdir_np(&fa, dir_fd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    std::string arg0 = "gnuplot", arg1 = script;
    char *argv[] = {arg0.data(), arg1.data(), nullptr};
    pid_t pid = -1;
    const int err = posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err == ENOENT) why = "gnuplot not found on the PATH (install gnuplot-nox)";
    if (err != 0 && err != ENOENT) why = std::string("cannot start gnuplot: ") + std::strerror(err);
    return err == 0 ? pid : -1;
}

// Runs gnuplot on `script` (a name in the directory open as `dir_fd`); "" or why it failed,
// with the last lines it printed.
std::string run_gnuplot(int dir_fd, const std::string &script) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0)
        return std::string("cannot start gnuplot: ") + std::strerror(errno);
    UniqueFd read_end(p[0]), write_end(p[1]);
    std::string why;
    const pid_t pid = spawn_gnuplot(dir_fd, script, write_end.get(), why);
    write_end.reset();
    if (pid < 0) return why;
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > 65536) out.erase(0, out.size() - 16384);  // only the end is shown
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return std::string("waiting for gnuplot: ") + std::strerror(errno);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return "gnuplot not found (install gnuplot-nox)";
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return "gnuplot failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")" +
               tail_of(out);
    if (WIFSIGNALED(status))
        return "gnuplot was killed by signal " + std::to_string(WTERMSIG(status)) + tail_of(out);
    return "";
}

bool is_png(int fd) {
    unsigned char head[8] = {};
    return ::pread(fd, head, sizeof head, 0) == ssize_t(sizeof head) &&
           std::memcmp(head, "\x89PNG\r\n\x1a\n", sizeof head) == 0;
}

// Draws the PNG into `png` (staged): the gnuplot script is a temporary beside it, removed once
// gnuplot is done.
void draw_png(int dir_fd, const std::string &dir, const Input &in,
              const std::vector<detail::Row> &rows, Staged &png) {
    Staged script(dir_fd, dir, "timeline.gp");
    script.put(detail::gnuplot_script(in, rows, png.temp_name()));
    const std::string err = run_gnuplot(dir_fd, script.temp_name());
    if (!err.empty()) throw std::runtime_error("cannot draw " + png.path() + ": " + err);
    if (!is_png(png.fd()))
        throw std::runtime_error("cannot draw " + png.path() + ": gnuplot drew no PNG");
}

}  // namespace

std::vector<std::string> write(const std::string &dir_given, const Input &in) {
    if (dir_given.empty()) throw std::runtime_error("no directory given for the timeline");
    std::string dir = dir_given;  // "out/" names its files out/timeline.csv, ...
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::string why = make_dir(dir);
    UniqueFd dir_fd;
    if (why.empty()) dir_fd = open_checked_dir(dir, DirTrust::shared, why);
    if (!dir_fd.valid()) throw std::runtime_error("not writing the timeline: " + why);
    const std::vector<detail::Row> rows = detail::rows_of(in);
    Staged jsonl(dir_fd.get(), dir, "timeline.jsonl"), csv(dir_fd.get(), dir, "timeline.csv");
    Staged png(dir_fd.get(), dir, "timeline.png"), html(dir_fd.get(), dir, "timeline.html");
    jsonl.put(detail::jsonl_text(rows));
    csv.put(detail::csv_text(rows));
    html.put(detail::page_text(in, rows));
    draw_png(dir_fd.get(), dir, in, rows, png);
    std::vector<std::string> paths;
    for (Staged *f : {&jsonl, &csv, &png, &html}) f->finish();
    for (Staged *f : {&jsonl, &csv, &png, &html}) {
        f->publish();
        paths.push_back(f->path());
    }
    return paths;
}

std::string refusal(const std::string &dir) {
    std::string at = dir;
    struct stat st {};
    while (::stat(at.c_str(), &st) != 0) {
        if (errno != ENOENT) return "cannot use " + at + ": " + std::strerror(errno);
        const std::string up = path_dir(at);
        if (up == at) return "cannot use " + dir + ": " + std::strerror(ENOENT);
        at = up;
    }
    if (!S_ISDIR(st.st_mode)) return at + " is not a directory";
    if (::access(at.c_str(), W_OK | X_OK) != 0)
        return "cannot create files in " + at + ": " + std::strerror(errno);
    return dir_refusal(at, DirTrust::shared);
}

std::string host_name() {
    char name[HOST_NAME_MAX + 1] = "";
    if (::gethostname(name, sizeof name) != 0 || name[0] == '\0') return "unknown";
    name[HOST_NAME_MAX] = '\0';
    return name;
}

}  // namespace viaduct::timeline
