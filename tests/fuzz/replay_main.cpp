// Replays saved inputs through a fuzz target when it is not linked with libFuzzer:
// every file named (or found in a folder named) on the command line is fed to it once.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

bool is_dir(const std::string &path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Files of a folder in name order, so a failing replay is the same every time.
bool list_dir(const std::string &dir, std::vector<std::string> &out) {
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) return false;
    std::vector<std::string> names;
    while (dirent *e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) out.push_back(dir + "/" + n);
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        // libFuzzer's flags (-runs=0, ...) are accepted so both builds take the same command.
        if (!arg.empty() && arg[0] == '-') continue;
        if (is_dir(arg)) {
            if (!list_dir(arg, files)) {
                std::fprintf(stderr, "replay: cannot read folder %s\n", arg.c_str());
                return 1;
            }
        } else {
            files.push_back(arg);
        }
    }
    size_t ran = 0;
    for (const std::string &path : files) {
        if (is_dir(path)) continue;
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
            return 1;
        }
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
        // An empty input still gets a valid pointer, as libFuzzer gives it.
        static const uint8_t none = 0;
        LLVMFuzzerTestOneInput(bytes.empty() ? &none : bytes.data(), bytes.size());
        ++ran;
    }
    std::printf("replay: %zu inputs passed\n", ran);
    return ran > 0 ? 0 : 1;
}
