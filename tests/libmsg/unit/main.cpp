// Entry point of the in-process tests: each process is a job of one, so any job or VIADUCT_*
// setting inherited from the shell is removed first.
// GCC 12 with sanitizers flags std::regex inside Catch2's runner as maybe-uninitialized;
// it is libstdc++'s code, not ours, and this file holds nothing else.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <catch2/catch.hpp>
#include <cstdlib>
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
