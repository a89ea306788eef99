// Shared test helpers: a temporary directory, whole-file I/O, the reference sort, running a tool.
#pragma once

#include <string>
#include <vector>

#include "sortapp/record_format.hpp"

namespace sortapp_test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }
    std::string operator/(const std::string &name) const { return path_ + "/" + name; }
    std::vector<std::string> entries() const;  // names in it, sorted

  private:
    std::string path_;
};

std::vector<std::uint8_t> read_file(const std::string &path);
void write_file(const std::string &path, const std::vector<std::uint8_t> &bytes);

// Records sorted by their whole bytes: a refinement of key order, so any correct sort's output,
// re-sorted the same way, must equal it.
std::vector<std::uint8_t> reference_sort(const sortapp::RecordFormat &format,
                                         std::vector<std::uint8_t> records);

struct ToolRun {
    int exit_code = -1;
    std::string out;  // stdout and stderr together
};
// Runs a shell command line with stdout and stderr captured.
ToolRun run_tool(const std::string &command_line);

// Path of a built tool, from the environment meson passes (e.g. SORTAPP_BIN).
std::string tool_path(const char *env_name);

}  // namespace sortapp_test
