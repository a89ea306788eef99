// The data behind the plots: link directions grouped for the utilization plot, the sweep's
// protocols side by side for the Figure 5 plot, and the paper's measured points.
#include "report/plot_data.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "paper_figure5.hpp"  // generated from report/paper_figure5.csv

namespace sansim {
namespace {

// X, Y, then F2, F3, ... (results.cpp's names).
int fabric_rank(const std::string &f) {
    if (f == "X") return 0;
    if (f == "Y") return 1;
    return f.size() > 1 && f[0] == 'F' ? std::atoi(f.c_str() + 1) : 1000;
}

// As traffic flows: into the fabric, across it, out of it.
int kind_rank(const std::string &k) {
    if (k == "node->switch") return 0;
    if (k == "switch->switch") return 1;
    if (k == "switch->node") return 2;
    return 3;
}

// Link indices grouped by fabric, then kind, in the topology's order within a group.
std::vector<std::size_t> link_plot_order(const std::vector<LinkResult> &links) {
    std::vector<std::size_t> order(links.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const LinkResult &x = links[a], &y = links[b];
        const int fx = fabric_rank(x.fabric), fy = fabric_rank(y.fabric);
        if (fx != fy) return fx < fy;
        return kind_rank(x.kind) < kind_rank(y.kind);
    });
    return order;
}

}  // namespace

std::vector<LinkGroup> write_link_plot_csv(const Results &r, const std::string &path) {
    std::ostringstream o;
    o << "position,name,fabric,kind,group,utilization,packets,index\n";
    std::vector<LinkGroup> groups;
    int x = 0;
    for (std::size_t i : link_plot_order(r.links)) {
        const LinkResult &l = r.links[i];
        if (groups.empty() || groups.back().fabric != l.fabric || groups.back().kind != l.kind) {
            if (!groups.empty()) x += 2;  // a gap shows where a group ends
            const std::string label = r.fabrics > 1 ? l.fabric + " " + l.kind : l.kind;
            groups.push_back({l.fabric, l.kind, label, x, x, 0});
        }
        LinkGroup &g = groups.back();
        g.last = x;
        ++g.links;
        o << x << ',' << l.name << ',' << l.fabric << ',' << l.kind << ',' << g.label << ','
          << l.utilization << ',' << l.packets << ',' << i << '\n';
        ++x;
    }
    write_file(path, o.str());
    return groups;
}

std::pair<bool, bool> write_throughput_csv(const std::vector<Results> &rows,
                                           const std::string &path) {
    // Node counts in the sweep's order; a count run twice keeps its last figures.
    std::vector<int> counts;
    std::map<int, std::pair<std::string, std::string>> mbps;
    bool unrestricted = false, restricted = false;
    for (const Results &r : rows) {
        if (!mbps.count(r.nodes)) counts.push_back(r.nodes);
        auto &cell = mbps[r.nodes];
        std::ostringstream v;
        v.precision(10);
        v << r.mean_bidir_mbps;
        (r.restricted ? cell.second : cell.first) = v.str();
        (r.restricted ? restricted : unrestricted) = true;
    }
    std::ostringstream o;
    o << "nodes,unrestricted_mbps,restricted_mbps\n";
    for (int n : counts) o << n << ',' << mbps[n].first << ',' << mbps[n].second << '\n';
    write_file(path, o.str());
    return {unrestricted, restricted};
}

void write_paper_figure5(const std::string &path) {
    write_file(path, kPaperFigure5Csv);
}

std::vector<int> paper_figure5_nodes() {
    std::vector<int> nodes;
    std::istringstream in(kPaperFigure5Csv);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] >= '0' && line[0] <= '9') nodes.push_back(std::stoi(line));
    return nodes;
}

}  // namespace sansim
