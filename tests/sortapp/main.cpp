// Entry point of sortapp's Catch2 tests.
// GCC 12 with sanitizers flags std::regex inside Catch2's runner as maybe-uninitialized;
// it is libstdc++'s code, not ours, and this file holds nothing else.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
