// The monitor's live view of a job (--watch): a line per node with its phase, the share of the
// phase done, a cpubar and a diskbar (the NOW-Sort tuning paper's tools) and its network MB/s,
// redrawn in place on a terminal several times a second; without one, a plain progress line.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "messages.hpp"
#include "monitor/counters.hpp"

namespace sortapp::cluster {

// What the view shows of one node.
struct NodeView {
    std::string phase;   // from the node's last progress answer; "" before its first
    double done = -1;    // the share of the phase done, 0..1; negative: the phase has no total
    bool rated = false;  // two samples have come: the rates below are known
    double user = 0;     // cpubar: this process's user time, share of the host's CPUs, 0..1
    double sys = 0;      // ... its system time
    double other = 0;    // ... other processes' busy time
    double iowait = 0;   // ... the host's iowait
    double read = 0;     // diskbar, MB/s: this process's reads
    double write = 0;    // ... and writes
    double others = 0;   // ... the rest of its device's traffic (other processes)
    double net = 0;      // MB/s its messaging layer sent and received
    double mb_s = 0;     // its own progress: bytes of its phase done per second
};

// The node's view from its last progress answer and the rates between its newest sample and
// the newest one at least `window_s` older (its progress rate: within the newest sample's
// phase, whose byte count starts again at 0).
NodeView view_of(const PhaseFigures &progress, const NodeCounters &counters, double window_s);

// One frame for a terminal `cols` wide and `rows` tall: a legend, the columns' titles and a
// line per node; no line longer than cols - 1 and at most rows - 1 lines, so drawing it never
// wraps or scrolls. A narrower terminal loses the bars, a shorter one the legend and then the
// last nodes' lines, which one line sums up. `full_mb_s` is the diskbar's full scale.
std::vector<std::string> frame_lines(const std::vector<NodeView> &nodes, double elapsed_s,
                                     double full_mb_s, int cols, int rows);

// The line printed now and then without a terminal, free of escape sequences:
// "sortapp: 10.0 s: n0 phase 1 45% 80 MB/s | n1 ...".
std::string plain_line(const std::vector<NodeView> &nodes, double elapsed_s);

// Frames drawn in place on a terminal: each replaces the last (drawn from the cursor, which
// rests on the frame's first line, every line cleared to its end), the terminal's size asked
// afresh each time.
class LiveView {
  public:
    explicit LiveView(std::FILE *out = stderr) : out_(out) {}
    // `probe_mb_s`: the largest disk figure the nodes measured (0: none yet); the diskbar is
    // full at it or at the most traffic seen so far, whichever is larger.
    void draw(const std::vector<NodeView> &nodes, double elapsed_s, double probe_mb_s);
    // Takes the frame off the screen, so that other lines start where it was.
    void erase();

  private:
    std::FILE *out_;
    bool drawn_ = false;  // a frame is on the screen, the cursor on its first line
    double largest_ = 0;  // the most disk traffic any node showed so far, MB/s
};

}  // namespace sortapp::cluster
