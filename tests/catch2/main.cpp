// The plain entry point of the Catch2 test programs (those with no set-up of their own).
#include "run_catch.hpp"

int main(int argc, char **argv) {
    return run_catch_session(argc, argv);
}
