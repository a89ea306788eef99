// river_options_t checked and turned into a river's Settings.
#pragma once

#include "core.hpp"

namespace riv {

// MSG_ERR_INVALID_ARG unless the options describe a river of this job.
int make_settings(const river_options_t &o, int rank, int size, Settings *out);

}  // namespace riv
