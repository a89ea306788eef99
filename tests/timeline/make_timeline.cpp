// Writes a synthetic job's timeline (tests/timeline/synthetic.hpp) into a directory, for the
// browser test and for looking at the page by hand.
// usage: make_timeline DIR NODES [HOST_OF_NODE_1]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "synthetic.hpp"
#include "viaduct/timeline.hpp"

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        std::fprintf(stderr, "usage: make_timeline DIR NODES [HOST_OF_NODE_1]\n");
        return 2;
    }
    const int nodes = std::atoi(argv[2]);
    if (nodes < 1 || nodes > 1024) {
        std::fprintf(stderr, "make_timeline: NODES must be 1 to 1024, not '%s'\n", argv[2]);
        return 2;
    }
    try {
        const auto in = timeline_test::synthetic_input(nodes, 240, argc == 4 ? argv[3] : "");
        for (const std::string &path : viaduct::timeline::write(argv[1], in))
            std::printf("%s\n", path.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "make_timeline: %s\n", e.what());
        return 1;
    }
    return 0;
}
