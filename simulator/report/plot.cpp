// PNG plots through gnuplot (Debian's gnuplot-nox). Each plot is a CSV of its data and a
// gnuplot script that reads it by its bare name, both left beside the PNG, so a plot can be
// checked without reading the image and drawn again with `cd DIR && gnuplot NAME.gp`.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "report/plot_data.hpp"
#include "report/results.hpp"
#include "viaduct/safe_file.hpp"

extern char **environ;

namespace sansim {
namespace {

const char *const kTerminal =
    "set terminal pngcairo size 900,540 noenhanced\nset datafile separator ','\n";

// A gnuplot string literal: single quotes, doubled inside.
std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
}

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// Runs `gnuplot -e "png='PNG'" NAME.gp` in `dir`, its output on our stderr (stdout may carry
// JSON).
std::string run_gnuplot(const std::string &dir, const std::string &gp, const std::string &png) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    std::string arg0 = "gnuplot", arg1 = "-e", arg2 = "png=" + quote(png), arg3 = gp;
    char *argv[] = {arg0.data(), arg1.data(), arg2.data(), arg3.data(), nullptr};
    pid_t pid = 0;
    const int err = posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err == ENOENT) return "gnuplot not found (install gnuplot-nox)";
    if (err != 0) return std::string("cannot start gnuplot: ") + std::strerror(err);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return std::string("waiting for gnuplot: ") + std::strerror(errno);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return "gnuplot not found (install gnuplot-nox)";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "gnuplot failed on " + dir + "/" + gp;
    return {};
}

// Writes NAME.gp and draws NAME.png from it. gnuplot draws into a fresh temporary beside it
// (made by us, never reached through a link), which is published as NAME.png once drawn, as
// write_file publishes; on failure no PNG is left behind. By hand, `gnuplot NAME.gp` draws
// NAME.png directly.
std::string render(const std::string &dir, const std::string &name, const std::string &body) {
    const std::string png = name + ".png", path = dir + "/" + png;
    write_file(
        dir + "/" + name + ".gp",
        kTerminal + ("if (!exists(\"png\")) png = " + quote(png) + "\nset output png\n") + body);
    std::string why;
    const viaduct::UniqueFd dir_fd = viaduct::open_checked_dir(dir, viaduct::DirTrust::shared, why);
    if (!dir_fd.valid()) throw std::runtime_error("not writing " + path + ": " + why);
    std::string tmp;
    const viaduct::UniqueFd fd(viaduct::create_temp_at(dir_fd.get(), "." + png + ".", 0600, tmp));
    if (!fd.valid())
        throw std::runtime_error("cannot create a temporary file in " + dir + ": " +
                                 std::strerror(errno));
    std::string err = run_gnuplot(dir, name + ".gp", tmp);
    int sys = 0;
    if (err.empty()) {
        sys = ::fchmod(fd.get(), viaduct::umask_mode()) == 0 && ::fdatasync(fd.get()) == 0 ? 0
                                                                                           : errno;
        if (sys == 0) sys = viaduct::publish_at(dir_fd.get(), tmp, png);
        if (sys == 0) return {};
    }
    ::unlinkat(dir_fd.get(), tmp.c_str(), 0);
    ::unlinkat(dir_fd.get(), png.c_str(), 0);  // an older plot would not match the data beside it
    if (sys != 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(sys));
    return err;
}

// Counts per log-linear bucket would jump wherever the bucket width doubles (at each power of
// two picoseconds: 8.4, 16.8, 33.6 us), so the plot shows count / width; each box spans its
// bucket exactly.
std::string rtt_script(const Results &r) {
    double floor = 0;
    std::uint64_t packets = 0;
    for (const RttBucket &b : r.rtt_histogram) {
        floor = floor == 0 ? b.density() : std::min(floor, b.density());
        packets += b.count;
    }
    floor /= 2;  // the boxes' common base on the log axis, below the lowest one
    std::string s =
        "set title " +
        quote("Packet RTT density, " + r.topology + " (" + std::to_string(packets) + " packets)") +
        "\n";
    s += "set xlabel 'RTT (us)'\nset ylabel 'packets per us (count / bucket width)'\n";
    s += "set logscale x\nset logscale y\nset style fill solid 0.6 noborder\n";
    if (r.rtt_histogram.empty())
        return s +
               "set label 'no packets' at graph 0.5, 0.5 center\nunset logscale y\n"
               "set xrange [1:10]\nset yrange [0:1]\nplot 1/0 notitle\n";
    s += "plot 'rtt_histogram.csv' every ::1 using ($1+$2/2):4:1:($1+$2):(" + num(floor) +
         "):4 with boxxyerror lc rgb '#4060c0' notitle\n";
    return s;
}

// Link directions grouped by fabric and kind, each group its colour and key entry; the links'
// own names are the tick labels when they fit, the groups' names otherwise.
std::string link_script(const Results &r, const std::vector<LinkGroup> &groups) {
    const bool named = r.links.size() <= 48;
    std::string s = "set title " +
                    quote("Utilization per link direction, " + r.topology +
                          (r.fabrics > 1 ? ", grouped by fabric and kind" : ", grouped by kind")) +
                    "\n";
    s += "set ylabel 'busy fraction'\nset yrange [0:1.25]\nset key top center horizontal\n";
    s += "set style fill solid 0.7 noborder\nset boxwidth 0.8\n";
    s += "set xrange [-1:" + std::to_string(groups.empty() ? 1 : groups.back().last + 1) + "]\n";
    if (named) {
        s += "set xlabel 'link direction'\nset xtics rotate by 90 right font ',8'\n";
    } else {
        s += "set xlabel " + quote(std::to_string(r.links.size()) + " link directions") + "\n";
        std::string tics;
        for (const LinkGroup &g : groups)
            tics +=
                (tics.empty() ? "" : ", ") + quote(g.label) + " " + num((g.first + g.last) / 2.0);
        s += "set xtics (" + tics + ") font ',9'\n";
    }
    for (std::size_t i = 1; i < groups.size();
         ++i) {  // a rule between groups, bold between fabrics
        const double x = groups[i].first - 1.0;
        const bool fabric = groups[i].fabric != groups[i - 1].fabric;
        s += "set arrow from " + num(x) + ", graph 0 to " + num(x) + ", graph 1 nohead " +
             (fabric ? "lw 2 lc rgb 'black'" : "dt 2 lc rgb 'gray'") + "\n";
    }
    s += "plot ";
    for (std::size_t i = 0; i < groups.size(); ++i)
        s += std::string(i ? ", \\\n     " : "") +
             "'link_utilization.csv' every ::1 using 1:(strcol(5) eq " + quote(groups[i].label) +
             " ? $6 : 1/0)" + (named ? ":xtic(2)" : "") + " with boxes lc " +
             std::to_string(i + 1) + " title " +
             quote(groups[i].label + " (" + std::to_string(groups[i].links) + ")");
    return s + (groups.empty() ? "1/0 notitle\n" : "\n");
}

// A fraction, so the axis is fixed: a run that never ran out of requests (all zeros) would
// otherwise leave gnuplot an empty range to complain about.
std::string or_script(const Results &r) {
    const std::string s =
        "set title 'Outstanding-request exhaustion over time'\nset xlabel 'time (us)'\n"
        "set ylabel 'fraction of NIC time exhausted'\nset yrange [0:1.05]\n";
    if (r.or_series.size() < 2)  // a run shorter than one bin: no time axis to draw
        return s +
               "set label 'no time series' at graph 0.5, 0.5 center\nset xrange [0:1]\n"
               "plot 1/0 notitle\n";
    return s + "plot 'or_series.csv' using 1:2 every ::1 with steps notitle\n";
}

bool powers_of_two(const std::vector<Results> &rows) {
    for (const Results &r : rows)
        if (r.nodes < 1 || (r.nodes & (r.nodes - 1)) != 0) return false;
    return !rows.empty();
}

// The model's curves, lines through their points, and beside them, for the all-to-all that
// Figure 5 measured, the paper's points in its own marks (squares, diamonds), left open.
std::string sweep_script(const std::vector<Results> &rows, std::pair<bool, bool> ran, bool paper) {
    std::string s = "set title 'Per-node bidirectional bandwidth vs node count (Figure 5)'\n";
    s += "set xlabel 'nodes'\nset ylabel 'MB/s per node (bidirectional)'\n";
    double top = 0;
    for (const Results &r : rows) top = std::max(top, r.mean_bidir_mbps);
    // Nothing delivered would leave an empty range [0:0].
    s += std::string("set key bottom left\nset yrange [0:") + (top > 0 ? "*" : "1") + "]\n";
    int lo = rows.empty() ? 1 : rows[0].nodes, hi = lo;
    for (const Results &r : rows) lo = std::min(lo, r.nodes), hi = std::max(hi, r.nodes);
    if (paper)
        for (int n : paper_figure5_nodes()) lo = std::min(lo, n), hi = std::max(hi, n);
    if (powers_of_two(rows)) {
        s += "set logscale x 2\nset xrange [" + num(lo / 1.3) + ":" + num(hi * 1.3) + "]\n";
        std::string tics;
        for (int n = 1; n <= hi; n *= 2)
            if (n >= lo) tics += (tics.empty() ? "" : ", ") + std::to_string(n);
        s += "set xtics (" + tics + ")\n";
    } else {
        s += "set xrange [" + num(std::max(0.0, lo - 0.1 * (hi - lo + 1))) + ":" +
             num(hi + 0.1 * (hi - lo + 1)) + "]\n";
    }
    std::vector<std::string> parts;
    if (ran.first)
        parts.push_back(
            "'throughput_vs_nodes.csv' every ::1 using 1:2 with linespoints lw 2 "
            "pt 5 lc 1 title 'model, unrestricted'");
    if (ran.second)
        parts.push_back(
            "'throughput_vs_nodes.csv' every ::1 using 1:3 with linespoints lw 2 "
            "pt 13 lc 2 title 'model, restricted'");
    if (paper) {
        parts.push_back(
            "'paper_figure5.csv' every ::1 using 1:2 with points pt 4 ps 2.5 lw 2 "
            "lc 1 title 'paper (measured, sec. 5.2.2.2), unrestricted'");
        parts.push_back(
            "'paper_figure5.csv' every ::1 using 1:3 with points pt 12 ps 2.5 lw 2 "
            "lc 2 title 'paper (measured, sec. 5.2.2.2), restricted'");
    }
    std::string plot;
    for (const std::string &p : parts) plot += (plot.empty() ? "plot " : ", \\\n     ") + p;
    return s + (plot.empty() ? "plot 1/0 notitle" : plot) + "\n";
}

}  // namespace

std::string plot_run(const Results &r, const std::string &dir) {
    write_csv(r, dir);
    const std::vector<LinkGroup> groups = write_link_plot_csv(r, dir + "/link_utilization.csv");
    for (const auto &[name, body] :
         {std::pair<std::string, std::string>{"rtt_histogram", rtt_script(r)},
          {"link_utilization", link_script(r, groups)},
          {"or_series", or_script(r)}}) {
        const std::string err = render(dir, name, body);
        if (!err.empty()) return err;
    }
    return {};
}

std::string plot_sweep(const std::vector<Results> &rows, const std::string &dir) {
    write_sweep_csv(rows, dir + "/sweep.csv");
    const auto ran = write_throughput_csv(rows, dir + "/throughput_vs_nodes.csv");
    // Figure 5 measured the all-to-all; against another workload its points would mislead.
    const bool paper = !rows.empty() && rows[0].workload == "alltoall";
    if (paper) write_paper_figure5(dir + "/paper_figure5.csv");
    return render(dir, "throughput_vs_nodes", sweep_script(rows, ran, paper));
}

std::string plot_load_sweep(const std::vector<Results> &rows, const std::string &dir) {
    write_load_sweep_csv(rows, dir + "/load_sweep.csv");
    std::string s = "set title 'Transfer latency against offered load'\n";
    s += "set xlabel 'offered load (fraction of injection capacity)'\nset ylabel 'latency (us)'\n";
    s += "set logscale y\nset key top left\n";
    // One load alone would be an empty x range: the axis spans the loads with a margin.
    double lo = rows.empty() ? 0 : rows.front().offered_load, hi = lo;
    for (const Results &r : rows)
        lo = std::min(lo, r.offered_load), hi = std::max(hi, r.offered_load);
    const double margin = std::max(0.05, 0.05 * (hi - lo));
    s += "set xrange [" + num(std::max(0.0, lo - margin)) + ":" + num(hi + margin) + "]\n";
    s += "plot 'load_sweep.csv' using 1:4 every ::1 with linespoints pt 7 title 'mean', \\\n";
    s += "     'load_sweep.csv' using 1:6 every ::1 with linespoints pt 5 title 'p99', \\\n";
    s += "     'load_sweep.csv' using 1:7 every ::1 with lines dt 2 title 'zero load'\n";
    return render(dir, "latency_vs_load", s);
}

}  // namespace sansim
