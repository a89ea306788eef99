// A file that appears under its final name only when complete. It is written under a temporary
// name beside the final one (".NAME.sortapp-XXXXXX", or ".NAME.sortapp-TAG-XXXXXX" with a
// tag), tracked by cleanup (a signal or a fatal error removes it), and removed when the object
// goes unless it was committed or kept.
#pragma once

#include <string>

#include "sortapp/io_ring.hpp"

namespace sortapp {

class PendingFile {
  public:
    PendingFile() = default;
    PendingFile(const PendingFile &) = delete;
    PendingFile &operator=(const PendingFile &) = delete;
    ~PendingFile();

    // Creates the temporary (mode 0666 less the umask) and opens it in `file`, O_DIRECT where
    // possible when `direct`. Refuses a directory another user owns or may change
    // (viaduct::DirTrust::shared).
    Status create(const std::string &final_path, bool direct, const std::string &tag = {});
    // Complete: renamed to the final name now and its directory synced (cleanup::commit). The
    // final name stays tracked; the caller untracks it once nothing can fail any more.
    Status commit();
    // Complete, but renamed later by the caller (cleanup::commit): left in place under its
    // temporary name, which stays tracked and is returned. A cluster node keeps its output so
    // until the whole job has succeeded.
    std::string keep();
    const std::string &temp_path() const { return temp_; }

    File file;

  private:
    std::string temp_, final_;
    bool done_ = false;  // committed or kept
};

}  // namespace sortapp
