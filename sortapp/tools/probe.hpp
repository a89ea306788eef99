// `sortapp probe`: measures the scratch disk now and prints the figures.
#pragma once

namespace sortapp {

// argv[0] is "probe". Returns the exit status.
int probe_main(int argc, char **argv);

}  // namespace sortapp
