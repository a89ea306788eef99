// Entry point of libremoteio's in-process tests: each process is a job of one,
// so any job or VIADUCT_* setting inherited from the shell is removed first.
#include <stdlib.h>

#include <string>
#include <vector>

#include "run_catch.hpp"

extern char **environ;

int main(int argc, char **argv) {
    std::vector<std::string> names;
    for (char **e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        if (entry.rfind("VIADUCT_", 0) != 0) continue;
        std::string name = entry.substr(0, entry.find('='));
        if (name != "VIADUCT_DEBUG" && name.rfind("VIADUCT_TEST_", 0) != 0) names.push_back(name);
    }
    for (const auto &name : names) unsetenv(name.c_str());
    return run_catch_session(argc, argv);
}
