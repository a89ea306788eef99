// The fault-injection tests' synchronisation point. With SORTAPP_TEST_HOLD="WHO|PHASE|FILE"
// in the environment, the thread that enters PHASE in process WHO ("node 2", "monitor",
// "sortapp local") writes its pid to FILE and waits there until the test removes FILE, so a
// test can kill or stop a process at a known place without guessing from the clock.
#pragma once

#include <string>

namespace sortapp {

// Returns at once unless the environment asks for this (who, phase).
void test_hold(const std::string &who, const std::string &phase);

}  // namespace sortapp
