// river's multi-process scenarios, one per file; each runs on every rank.
#pragma once

#include "river_harness.hpp"

namespace rivertest {

void run_flow(const Args &args);
void run_slow_sink(const Args &args);
void run_killed_sink(const Args &args);
void run_killed_source(const Args &args);
void run_rogue_source(const Args &args);
void run_rogue_sink(const Args &args);

}  // namespace rivertest
