// SORTAPP_TEST_HOLD (see test_hold.hpp).
#include "sortapp/test_hold.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "viaduct/safe_file.hpp"

namespace sortapp {

void test_hold(const std::string &who, const std::string &phase) {
    const char *spec = std::getenv("SORTAPP_TEST_HOLD");
    if (spec == nullptr) return;
    const std::string s = spec;
    const auto a = s.find('|');
    const auto b = a == std::string::npos ? a : s.find('|', a + 1);
    if (b == std::string::npos || s.substr(0, a) != who || s.substr(a + 1, b - a - 1) != phase)
        return;
    const std::string file = s.substr(b + 1);
    if (!viaduct::write_file_atomically(file, std::to_string(getpid()) + "\n").empty()) return;
    while (access(file.c_str(), F_OK) == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace sortapp
