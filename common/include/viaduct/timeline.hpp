// A job's collated counters written as a timeline: JSON lines and CSV for programs, a gnuplot
// PNG and a self-contained HTML page for people (NOW-Sort's cpubar and diskbar, every node on
// one time axis, replayable). docs/timeline.md describes the files and their fields.
#pragma once

#include <string>
#include <vector>

#include "viaduct/counters.hpp"

namespace viaduct::timeline {

// One node's samples, already on the job's common clock (time_us) and in time order.
struct Node {
    int index = 0;
    std::string host;
    std::vector<CounterSample> samples;
};

struct Input {
    std::string title;                     // e.g. "sortapp run: 4 nodes, three-phase, 1.07 GB"
    std::vector<std::string> phase_names;  // CounterSample::phase indexes this
    std::vector<Node> nodes;
    std::vector<std::string> needles;  // the needle finder's lines; may be empty
    std::string report;                // the run's text report, shown beside the pictures
};

// Writes DIR/timeline.jsonl, timeline.csv, timeline.png (drawn by gnuplot) and timeline.html.
// DIR is created if absent (mode 0777 less the umask) and refused if another user owns it or
// every user may write it without the sticky bit. The four files are written as temporaries
// first and published (rename, then a directory fsync) only once all four are complete, so a
// failure leaves the directory as it was. Throws std::runtime_error naming the file and the
// cause (a missing or failing gnuplot among them). Returns the paths written.
std::vector<std::string> write(const std::string &dir, const Input &in);

// Why a timeline cannot go into `dir` ("" when it can), for a program to check before its work
// so that a refused directory costs none: the directory itself when it exists, else the
// nearest directory above it that does (where write() would make it). Refused: not a
// directory, one this process may not create files in, another user's, or one every user may
// write without the sticky bit (an entry made there could be swapped under the writer).
std::string refusal(const std::string &dir);

// This host's name, for a node's lane ("unknown" when it has none).
std::string host_name();

}  // namespace viaduct::timeline
