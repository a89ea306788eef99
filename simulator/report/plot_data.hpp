// The data behind the plots that no other CSV holds as the plot needs it: link directions
// grouped by fabric and kind, the sweep's protocols side by side, the paper's Figure 5 points.
#pragma once
#include <string>
#include <vector>

#include "report/results.hpp"

namespace sansim {

// A run of link directions of one fabric and one kind, at x positions first..last.
struct LinkGroup {
    std::string fabric, kind, label;
    int first = 0, last = 0;
    int links = 0;
};

// link_utilization.csv: every link direction, grouped by fabric, then kind (node->switch,
// switch->switch, switch->node), in the topology's order within a group, with the x position
// it takes in the plot (a gap of two between groups). Returns the groups in that order.
std::vector<LinkGroup> write_link_plot_csv(const Results &r, const std::string &path);

// throughput_vs_nodes.csv: one row per node count, MB/s per node (bidirectional) for each
// protocol the sweep ran. Returns which ran: {unrestricted, restricted}.
std::pair<bool, bool> write_throughput_csv(const std::vector<Results> &rows,
                                           const std::string &path);

// Writes the paper's measured Figure 5 points (report/paper_figure5.csv, built in) to `path`.
void write_paper_figure5(const std::string &path);
// The node counts those points stand at.
std::vector<int> paper_figure5_nodes();

}  // namespace sansim
