// Shared test helpers.
#include "helpers.hpp"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "viaduct/env.hpp"

namespace sortapp_test {

TempDir::TempDir() {
    std::string templ = viaduct::env::text("TMPDIR", "/tmp") + "/sortapp-test.XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
}

TempDir::~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
}

std::vector<std::string> TempDir::entries() const {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(path_.c_str())) {
        while (dirent *e = ::readdir(d)) {
            std::string n = e->d_name;
            if (n != "." && n != "..") names.push_back(n);
        }
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::uint8_t> read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string &path, const std::vector<std::uint8_t> &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::uint8_t> reference_sort(const sortapp::RecordFormat &format,
                                         std::vector<std::uint8_t> records) {
    const std::size_t rs = format.record_size, n = records.size() / rs;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::memcmp(&records[a * rs], &records[b * rs], rs) < 0;
    });
    std::vector<std::uint8_t> out(records.size());
    for (std::size_t i = 0; i < n; ++i) std::memcpy(&out[i * rs], &records[order[i] * rs], rs);
    return out;
}

ToolRun run_tool(const std::string &command_line) {
    ToolRun r;
    std::string cmd = command_line + " 2>&1";
    FILE *p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("popen failed");
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::string tool_path(const char *env_name) {
    const char *p = std::getenv(env_name);
    if (p == nullptr || *p == '\0') throw std::runtime_error(std::string(env_name) + " is not set");
    return p;
}

}  // namespace sortapp_test
