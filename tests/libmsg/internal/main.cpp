// Catch2 entry point for the tests of libmsg's internal pieces.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
