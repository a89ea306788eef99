// The timeline's PNG: a gnuplot script (the data inline, as datablocks) that draws one lane per
// node, stacked: the process's CPU (user, system), other processes' and iowait as stacked areas
// (NOW-Sort's cpubar over time), disk and network MB/s as lines on a scale common to every
// lane (its diskbar), the node's phases as bands behind them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <span>
#include <string>

#include "timeline_detail.hpp"

namespace viaduct::timeline::detail {
namespace {

// Light band colours, one per phase index (repeating); the curves are drawn over them.
const char *const kBandColours[] = {"#dde6f5", "#f7e9d2", "#dcefe0", "#f3dcea",
                                    "#e6e6e6", "#f5f0c8", "#d6eeee", "#e8ddf6"};

// Pixel geometry: lanes get shorter as they get more numerous, down to a floor where the
// node's label and the CPU scale stay readable.
struct Geometry {
    int lanes = 1, lane_px = 190, gap_px = 10, top_px = 78, bottom_px = 58;
    int left_px = 190, right_px = 90, width_px = 1400;
    int height() const { return top_px + bottom_px + lanes * lane_px + (lanes - 1) * gap_px; }
};

Geometry geometry_for(std::size_t lanes) {
    Geometry g;
    g.lanes = std::max<int>(1, static_cast<int>(lanes));
    g.lane_px = std::clamp(1600 / g.lanes, 96, 190);
    g.gap_px = g.lanes > 8 ? 6 : 10;
    return g;
}

// A gnuplot single-quoted string: no escapes inside, quotes doubled; control characters, which
// would end the script's line, become spaces.
std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'')
            q += "''";
        else
            q += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    return q + "'";
}

// At most `max` bytes of `s`, cut before a UTF-8 continuation byte, with "..." when cut.
std::string shortened(const std::string &s, std::size_t max) {
    if (s.size() <= max) return s;
    std::size_t cut = max - 3;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return s.substr(0, cut) + "...";
}

std::string fraction(double v) {
    return number_text(v, 5);
}

// One node's view as a datablock: t, user, + sys, + other, + iowait (the stacked areas' tops),
// disk MB/s (read + write), network MB/s (sent + received).
std::string datablock(std::span<const Row> rows, std::size_t lane) {
    std::string s = "$lane" + std::to_string(lane) + " << EOD\n";
    if (rows.empty()) s += "0 0 0 0 0 0 0\n";  // a node without samples: an empty lane
    for (const Row &r : rows) {
        const View v = view_of(r);
        s += number_text(r.t, 3) + " " + number_text(v.user, 2) + " " +
             number_text(v.user + v.sys, 2) + " " + number_text(v.user + v.sys + v.other, 2) + " " +
             number_text(v.user + v.sys + v.other + v.iowait, 2) + " " +
             number_text(v.disk_read + v.disk_write, 3) + " " +
             number_text(v.net_sent + v.net_received, 3) + "\n";
    }
    return s + "EOD\n";
}

// The MB/s scale shared by every lane, so that a slow node's lane looks slower: the highest
// disk or network rate of any node, rounded up to 1, 2 or 5 times a power of ten.
double common_mb_s_scale(const std::vector<Row> &rows) {
    double top = 0;
    for (const Row &r : rows) {
        const View v = view_of(r);
        top = std::max({top, v.disk_read + v.disk_write, v.net_sent + v.net_received});
    }
    if (!(top > 0)) return 1;
    const double decade = std::pow(10, std::floor(std::log10(top)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (top <= m * decade) return m * decade;
    return 10 * decade;
}

// The node's phases as bands behind the curves (each from its first sample to the next phase's
// first), a dashed rule where each begins, and its name at the top when the band is wide enough.
std::string phase_bands(std::span<const Row> rows, double t_end, double px_per_s) {
    std::string s;
    int tag = 1;
    for (std::size_t i = 0; i < rows.size();) {
        std::size_t j = i;
        while (j < rows.size() && rows[j].sample->phase == rows[i].sample->phase) ++j;
        const double from = rows[i].t, to = j < rows.size() ? rows[j].t : t_end;
        const uint32_t phase = rows[i].sample->phase;
        const char *colour = kBandColours[phase % (sizeof kBandColours / sizeof *kBandColours)];
        const std::string tg = std::to_string(tag++);
        s += "set object " + tg + " rect from " + fraction(from) + ", graph 0 to " + fraction(to) +
             ", graph 1 behind fillcolor rgb '" + colour + "' fillstyle solid 1.0 noborder\n";
        if (i > 0)
            s += "set arrow " + tg + " from " + fraction(from) + ", graph 0 to " + fraction(from) +
                 ", graph 1 nohead dashtype 2 linecolor rgb '#505050' front\n";
        if ((to - from) * px_per_s > 8.0 * (rows[i].phase.size() + 1))
            s += "set label " + tg + " " + quote(shortened(rows[i].phase, 24)) + " at " +
                 fraction(from) + ", graph 0.9 offset 0.4,0 left front font ',8'\n";
        i = j;
    }
    return s;
}

// The nodes the needle finder's lines name ("needle: node 2, phase 3b, ...").
std::set<int> needle_nodes(const Input &in) {
    std::set<int> nodes;
    for (const std::string &line : in.needles) {
        const std::size_t at = line.find("node ");
        if (at != std::string::npos && at + 5 < line.size() && std::isdigit(uint8_t(line[at + 5])))
            nodes.insert(std::atoi(line.c_str() + at + 5));
    }
    return nodes;
}

// The lane's curves: (columns, style, colour, key title), drawn in this order.
const char *const kCurves[][4] = {
    {"1:2", "filledcurves x1", "#3b6fc4", "CPU user (this process)"},
    {"1:2:3", "filledcurves", "#d9534f", "CPU system (this process)"},
    {"1:3:4", "filledcurves", "#9a9a9a", "CPU other processes"},
    {"1:4:5", "filledcurves", "#e3b448", "CPU iowait"},
    {"1:6 axes x1y2", "lines linewidth 2", "#1f8a3a", "disk MB/s (read + write)"},
    {"1:7 axes x1y2", "lines linewidth 2", "#8e44ad", "network MB/s (sent + received)"},
};

std::string plot_command(std::size_t lane) {
    std::string s;
    for (const auto &c : kCurves)
        s += std::string(s.empty() ? "plot " : ", \\\n     ") + "$lane" + std::to_string(lane) +
             " using " + c[0] + " with " + c[1] + " linecolor rgb '" + c[2] + "' title '" + c[3] +
             "'";
    return s + "\n";
}

// The script's settings shared by every lane: terminal, layout, axes.
std::string preamble(const Input &in, const Geometry &g, double t_end, double scale,
                     const std::string &png) {
    const double w = g.width_px, h = g.height();
    std::string s = "set terminal pngcairo size " + std::to_string(g.width_px) + "," +
                    std::to_string(g.height()) + " noenhanced font 'sans," +
                    (g.lanes > 8 ? "9" : "10") + "'\nset output " + quote(png) + "\n";
    s += "set multiplot layout " + std::to_string(g.lanes) + ",1 title " +
         quote(shortened(in.title, 160)) + " font ',13' margins " + fraction(g.left_px / w) + "," +
         fraction(1 - g.right_px / w) + "," + fraction(g.bottom_px / h) + "," +
         fraction(1 - g.top_px / h) + " spacing 0," + fraction(g.gap_px / h) + "\n";
    // Crowded lanes keep only their middle tics: the ends would meet the next lane's.
    const bool crowded = g.lanes > 8;
    s += "set xrange [0:" + fraction(t_end) +
         "]\nset yrange [0:100]\nset y2range [0:" + fraction(scale) + "]\n";
    s += crowded ? "set ytics 50,50,50" : "set ytics 0,50,100";
    s += " format '%g%%' nomirror\nset y2tics ";
    s += crowded ? fraction(scale / 2) + "," + fraction(scale) + "," + fraction(scale / 2)
                 : "0," + fraction(scale / 2) + "," + fraction(scale);
    s += " format '%g MB/s'\nset border 15 linecolor rgb '#808080'\n";
    s += "set style fill solid 0.85 noborder\nset grid y2tics linecolor rgb '#c8c8c8'\n";
    s += "set xtics out nomirror\nset mxtics\nunset key\n";
    return s;
}

// One node's lane: its name and host at the left (in red, marked, when a needle line names it),
// its phase bands, the curves; the time axis under the last lane only, the key above the first.
std::string lane_script(const Input &in, std::span<const Row> rows, std::size_t lane,
                        const std::set<int> &needled, const Geometry &g, double t_end) {
    const Node &node = in.nodes[lane];
    const double plot_px = g.width_px - g.left_px - g.right_px;
    std::string s = "unset object\nunset arrow\nunset label\n";
    const bool needle = needled.count(node.index) != 0;
    s += "set label 1000 'node " + std::to_string(node.index) + "' . \"\\n\" . " +
         quote(shortened(node.host, 20)) + (needle ? " . \"\\nneedle\"" : "") +
         " at graph 0, graph 0.5 right offset -5.5,0 front textcolor rgb '" +
         (needle ? "#b3261e" : "#000000") + "'\n";
    s += phase_bands(rows, t_end, t_end > 0 ? plot_px / t_end : 0);
    if (lane == 0)
        s += "set key horizontal at screen 0.5, screen " +
             fraction(1 - (g.top_px - 14.0) / g.height()) +
             " center center maxrows 1 reverse Left samplen 2 width 2 font ',9'\n";
    else
        s += "unset key\n";
    if (lane + 1 == in.nodes.size())
        s += "set format x '%g'\nset xlabel 'seconds since the job''s first sample'\n";
    else
        s += "set format x ''\nunset xlabel\n";
    return s + plot_command(lane);
}

}  // namespace

std::string gnuplot_script(const Input &in, const std::vector<Row> &rows, const std::string &png) {
    const Geometry g = geometry_for(in.nodes.size());
    double t_end = 0;
    for (const Row &r : rows) t_end = std::max(t_end, r.t);
    if (!(t_end > 0)) t_end = 1;              // one instant or none: an axis gnuplot accepts
    std::vector<std::span<const Row>> lanes;  // each node's rows
    for (std::size_t lane = 0, first = 0; lane < in.nodes.size(); ++lane) {
        lanes.emplace_back(rows.data() + first, in.nodes[lane].samples.size());
        first += in.nodes[lane].samples.size();
    }
    const std::set<int> needled = needle_nodes(in);
    std::string s;
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) s += datablock(lanes[lane], lane);
    s += preamble(in, g, t_end, common_mb_s_scale(rows), png);
    for (std::size_t lane = 0; lane < lanes.size(); ++lane)
        s += lane_script(in, lanes[lane], lane, needled, g, t_end);
    if (in.nodes.empty())
        s += "set label 'no nodes' at graph 0.5, graph 0.5 center\nplot 1/0 notitle\n";
    return s + "unset multiplot\n";
}

}  // namespace viaduct::timeline::detail
