// Catch2's implementation, compiled once per build for every test program, and the one call a
// main() needs (Catch::Session is only declared where the implementation is compiled).
// GCC 12 with sanitizers flags std::regex inside Catch2's runner as maybe-uninitialized;
// it is libstdc++'s code, not ours.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "run_catch.hpp"

int run_catch_session(int argc, char **argv) {
    return Catch::Session().run(argc, argv);
}
