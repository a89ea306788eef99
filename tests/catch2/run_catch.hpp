// Runs Catch2 with the command line; for test programs with a main() of their own.
#pragma once

int run_catch_session(int argc, char **argv);
