// A file that appears only when complete (see pending_file.hpp).
#include "sortapp/pending_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "sortapp/cleanup.hpp"
#include "viaduct/path.hpp"
#include "viaduct/safe_file.hpp"

namespace sortapp {

PendingFile::~PendingFile() {
    file.close();
    if (!temp_.empty() && !done_) cleanup::remove(temp_);
}

Status PendingFile::create(const std::string &final_path, bool direct, const std::string &tag) {
    final_ = final_path;
    const viaduct::PathParts where = viaduct::split_path(final_path);
    const std::string &dir = where.dir;
    // A directory that cannot be opened is named by mkstemp below; one that can must be safe.
    const std::string why = viaduct::dir_refusal(dir, viaduct::DirTrust::shared);
    if (!why.empty()) return Status::error("not writing " + final_path + ": " + why);
    std::string templ =
        dir + "/." + where.base + ".sortapp-" + (tag.empty() ? "" : tag + "-") + "XXXXXX";
    SORTAPP_TRY(cleanup::create([&](std::string &path) {
        std::vector<char> name(templ.begin(), templ.end());
        name.push_back('\0');
        int fd = ::mkstemp(name.data());
        if (fd < 0) return Status::from_errno("cannot create the output in " + dir, errno);
        // mkstemp's 0600 is for the name; the sorted file gets what the umask allows, from the
        // start (a 0600 input under umask 077 never has a readable output, not even for a while).
        ::fchmod(fd, viaduct::umask_mode(0666));
        ::close(fd);
        path = temp_ = name.data();
        return Status::ok();
    }));
    return File::create(temp_, direct, true, file);
}

Status PendingFile::commit() {
    file.close();
    SORTAPP_TRY(cleanup::commit(temp_, final_));
    done_ = true;
    return Status::ok();
}

std::string PendingFile::keep() {
    file.close();
    done_ = true;
    return temp_;
}

}  // namespace sortapp
