// The live view (see live_view.hpp): each node's figures from its samples, laid out in lines
// that fit the terminal, and drawn over the last frame.
#include "monitor/live_view.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <utility>

namespace sortapp::cluster {

namespace {

constexpr int kPhaseWidth = 13;  // "network probe", the longest of the nodes' phases
constexpr int kWidestBar = 30;
constexpr int kNarrowestBar = 5;

// printf into a std::string.
__attribute__((format(printf, 1, 2))) std::string text(const char *format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    return line;
}

// A phase name as the terminal may show it: a node's bytes, so control characters (an escape
// sequence that would move the cursor) become '?'.
std::string printable(const std::string &name) {
    std::string out = name.empty() ? "starting" : name;
    for (char &c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

std::string percent(const NodeView &v) {
    return v.done < 0 ? "-" : text("%.0f%%", 100 * v.done);
}

// The index of the newest sample at least `window_us` older than the newest (the oldest when
// none is), among the samples from `floor` on.
size_t window_start(const std::vector<viaduct::CounterSample> &s, size_t floor, int64_t window_us) {
    size_t i = s.size() - 1;
    while (i > floor && s.back().time_us - s[i].time_us < window_us) --i;
    return i;
}

// A bar `width` characters wide: each segment's share of the whole filled with its letter,
// in order, the rest blank. A character shows the segment its middle falls in.
std::string bar(const std::vector<std::pair<double, char>> &segments, int width) {
    std::string out(static_cast<size_t>(width), ' ');
    for (int i = 0; i < width; ++i) {
        const double middle = (i + 0.5) / width;
        double edge = 0;
        for (const auto &[share, letter] : segments) {
            edge += std::max(share, 0.0);
            if (middle < edge) {
                out[static_cast<size_t>(i)] = letter;
                break;
            }
        }
    }
    return out;
}

double disk_total(const NodeView &v) {
    return v.read + v.write + v.others;
}

// Where the columns go for `width` characters: bars when at least kNarrowestBar fit each.
struct Layout {
    int node = 4;  // the node number's width
    int cpu = 0, disk = 0;
    bool bars() const { return cpu >= kNarrowestBar; }
};

Layout layout(size_t nodes, int width) {
    Layout l;
    l.node = std::max(4, static_cast<int>(std::to_string(nodes > 0 ? nodes - 1 : 0).size()));
    // node, phase, done, "[cpu]", "[disk]", disk and network MB/s, with a space between each.
    const int fixed = l.node + 1 + kPhaseWidth + 1 + 4 + 1 + 2 + 1 + 2 + 1 + 5 + 1 + 5;
    const int room = width - fixed;
    l.cpu = std::min(kWidestBar, room / 2);
    l.disk = std::min(kWidestBar, room - l.cpu);
    return l;
}

std::string title_line(const Layout &l, double full_mb_s) {
    if (!l.bars())
        return text("%-*s %-*s %4s %4s %5s %5s", l.node, "node", kPhaseWidth, "phase", "done",
                    "cpu", "disk", "net");
    std::string disk = text("disk 0-%.0f MB/s", full_mb_s);
    if (full_mb_s <= 0 || static_cast<int>(disk.size()) > l.disk + 2) disk = "disk";
    return text("%-*s %-*s %4s %-*s %-*s %5s %5s", l.node, "node", kPhaseWidth, "phase", "done",
                l.cpu + 2, "cpu", l.disk + 2, disk.c_str(), "disk", "net");
}

std::string node_line(const Layout &l, size_t k, const NodeView &v, double full_mb_s) {
    full_mb_s = std::max(full_mb_s, 1.0);
    const std::string phase = printable(v.phase), done = percent(v);
    if (!v.rated)
        return text("%*zu %-*.*s %4s", l.node, k, kPhaseWidth, kPhaseWidth, phase.c_str(),
                    done.c_str());
    if (!l.bars())
        return text("%*zu %-*.*s %4s %3.0f%% %5.0f %5.0f", l.node, k, kPhaseWidth, kPhaseWidth,
                    phase.c_str(), done.c_str(), 100 * (v.user + v.sys + v.other), disk_total(v),
                    v.net);
    const std::string cpu =
        bar({{v.user, 'u'}, {v.sys, 's'}, {v.other, 'o'}, {v.iowait, 'w'}}, l.cpu);
    const std::string disk =
        bar({{v.read / full_mb_s, 'r'}, {v.write / full_mb_s, 'w'}, {v.others / full_mb_s, 'o'}},
            l.disk);
    return text("%*zu %-*.*s %4s [%s] [%s] %5.0f %5.0f", l.node, k, kPhaseWidth, kPhaseWidth,
                phase.c_str(), done.c_str(), cpu.c_str(), disk.c_str(), disk_total(v), v.net);
}

// Nodes `from` on in one line: how many are in each phase (in the order first met) and the
// range of their progress.
std::string summary_line(const std::vector<NodeView> &nodes, size_t from) {
    std::vector<std::pair<std::string, int>> phases;
    double least = 2, most = -1;
    for (size_t k = from; k < nodes.size(); ++k) {
        const std::string name = printable(nodes[k].phase);
        auto it = std::find_if(phases.begin(), phases.end(),
                               [&](const auto &p) { return p.first == name; });
        if (it == phases.end())
            phases.emplace_back(name, 1);
        else
            ++it->second;
        if (nodes[k].done >= 0)
            least = std::min(least, nodes[k].done), most = std::max(most, nodes[k].done);
    }
    std::string out = text("nodes %zu-%zu:", from, nodes.size() - 1);
    for (size_t i = 0; i < phases.size(); ++i)
        out += text("%s %s x%d", i ? "," : "", phases[i].first.c_str(), phases[i].second);
    if (most >= 0) out += text("; %.0f-%.0f%% done", 100 * least, 100 * most);
    return out;
}

// The full scale rounded up to 1, 2 or 5 times a power of ten, so that it changes seldom.
double round_scale(double mb_s) {
    const double decade = std::pow(10.0, std::floor(std::log10(std::max(mb_s, 1.0))));
    for (double step : {1.0, 2.0, 5.0, 10.0})
        if (mb_s <= step * decade) return step * decade;
    return 10 * decade;
}

}  // namespace

NodeView view_of(const PhaseFigures &progress, const NodeCounters &counters, double window_s) {
    NodeView v;
    v.phase = progress.phase;
    if (progress.bytes_written > 0)
        v.done = std::min(1.0, static_cast<double>(progress.bytes_read) / progress.bytes_written);
    const std::vector<viaduct::CounterSample> &s = counters.samples;
    if (s.size() < 2) return v;
    const auto window_us = static_cast<int64_t>(window_s * 1e6);
    const viaduct::CounterSample &b = s.back();
    const viaduct::CounterRates r = viaduct::rates(s[window_start(s, 0, window_us)], b);
    if (r.seconds <= 0) return v;
    v.rated = true;
    const double cpus = std::max<uint32_t>(b.cpus, 1);
    v.user = std::clamp(r.proc_user / cpus, 0.0, 1.0);
    v.sys = std::clamp(r.proc_sys / cpus, 0.0, 1.0);
    v.other = std::clamp(r.other_cpu, 0.0, 1.0);
    v.iowait = std::clamp(r.host_iowait, 0.0, 1.0);
    v.read = r.proc_read_mb_s;
    v.write = r.proc_write_mb_s;
    v.others = std::max(0.0, r.dev_read_mb_s + r.dev_write_mb_s - v.read - v.write);
    v.net = r.net_sent_mb_s + r.net_received_mb_s;
    size_t first = s.size() - 1;  // the newest phase's first sample
    while (first > 0 && s[first - 1].phase == b.phase) --first;
    v.mb_s = viaduct::rates(s[window_start(s, first, window_us)], b).mb_s;
    return v;
}

std::vector<std::string> frame_lines(const std::vector<NodeView> &nodes, double elapsed_s,
                                     double full_mb_s, int cols, int rows) {
    const auto width = static_cast<size_t>(std::max(cols, 2) - 1);
    const auto most = static_cast<size_t>(std::max(rows, 2) - 1);
    std::vector<std::string> out;
    if (most < 3 || nodes.empty()) {
        out.push_back(text("%.1f s ", elapsed_s) + (nodes.empty() ? "" : summary_line(nodes, 0)));
    } else {
        const Layout l = layout(nodes.size(), static_cast<int>(width));
        if (nodes.size() + 2 <= most)
            out.push_back(
                text("%.1f s  cpu: u user, s sys, o others, w iowait  disk: r read, "
                     "w write, o others",
                     elapsed_s));
        out.push_back(title_line(l, full_mb_s));
        const size_t room = most - out.size();
        const size_t shown = nodes.size() <= room ? nodes.size() : room - 1;
        for (size_t k = 0; k < shown; ++k) out.push_back(node_line(l, k, nodes[k], full_mb_s));
        if (shown < nodes.size()) out.push_back(summary_line(nodes, shown));
    }
    for (std::string &line : out)
        if (line.size() > width) line.resize(width);
    return out;
}

std::string plain_line(const std::vector<NodeView> &nodes, double elapsed_s) {
    std::string out = text("sortapp: %.0f s:", elapsed_s);
    for (size_t k = 0; k < nodes.size(); ++k) {
        const NodeView &v = nodes[k];
        out += text("%s n%zu %s", k ? " |" : "", k, printable(v.phase).c_str());
        if (v.done >= 0) out += text(" %s", percent(v).c_str());
        if (v.rated) out += text(" %.0f MB/s", v.mb_s);
    }
    return out;
}

void LiveView::draw(const std::vector<NodeView> &nodes, double elapsed_s, double probe_mb_s) {
    for (const NodeView &v : nodes) largest_ = std::max(largest_, disk_total(v));
    int cols = 80, rows = 24;
    winsize ws{};
    if (::ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0) {
        if (ws.ws_col > 0) cols = ws.ws_col;
        if (ws.ws_row > 0) rows = ws.ws_row;
    }
    const double most = std::max(largest_, probe_mb_s);
    // A blank line first, where the cursor rests between frames: a line another process
    // writes meanwhile (a node's warning) lands there whole, and the next frame goes below it.
    std::vector<std::string> lines =
        frame_lines(nodes, elapsed_s, most > 0 ? round_scale(most) : 0, cols, rows - 1);
    lines.insert(lines.begin(), "");
    std::string frame = "\r";
    for (const std::string &line : lines) frame += line + "\033[K\n";
    // Whatever a taller frame before left below this one goes; the cursor back to the top.
    frame += "\033[J\033[" + std::to_string(lines.size()) + "A";
    std::fwrite(frame.data(), 1, frame.size(), out_);
    std::fflush(out_);
    drawn_ = true;
}

void LiveView::erase() {
    if (!drawn_) return;
    std::fputs("\r\033[J", out_);
    std::fflush(out_);
    drawn_ = false;
}

}  // namespace sortapp::cluster
