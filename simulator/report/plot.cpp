// PNG plots through gnuplot (Debian's gnuplot-nox): the CSV files are the data, a small
// script per plot is piped to gnuplot.
#include <cstdio>
#include <string>

#include "report/results.hpp"

namespace sansim {
namespace {

std::string run_gnuplot(const std::string &script) {
    FILE *p = popen("gnuplot 2>&1", "w");
    if (p == nullptr) return "cannot start gnuplot";
    std::fwrite(script.data(), 1, script.size(), p);
    const int rc = pclose(p);
    if (rc != 0) return "gnuplot failed (is gnuplot-nox installed?)";
    return {};
}

std::string quote(const std::string &s) {
    return "'" + s + "'";
}

}  // namespace

std::string plot_run(const Results &r, const std::string &dir) {
    write_csv(r, dir);
    std::string s = "set terminal pngcairo size 900,540 noenhanced\nset datafile separator ','\n";
    s += "set output " + quote(dir + "/rtt_histogram.png") + "\n";
    s +=
        "set title 'Packet RTT, " + r.topology + "'\nset xlabel 'RTT (us)'\nset ylabel 'packets'\n";
    s += "set logscale x\nset style fill solid 0.6\n";
    s += "plot " + quote(dir + "/rtt_histogram.csv") +
         " using 1:2 every ::1 with impulses lw 3 title ''\n";
    s += "unset logscale x\n";
    s += "set output " + quote(dir + "/link_utilization.png") + "\n";
    s += "set title 'Utilization per link direction'\nset xlabel 'link direction'\nset ylabel "
         "'busy fraction'\n";
    s += "set yrange [0:1]\n";
    s += "plot " + quote(dir + "/links.csv") + " using 1:5 every ::1 with boxes title ''\n";
    s += "set output " + quote(dir + "/or_series.png") + "\n";
    s += "set title 'Outstanding-request exhaustion over time'\nset xlabel 'time (us)'\n";
    s += "set ylabel 'fraction of NIC time exhausted'\n";
    s += "plot " + quote(dir + "/or_series.csv") + " using 1:2 every ::1 with steps title ''\n";
    return run_gnuplot(s);
}

std::string plot_sweep(const std::vector<Results> &rows, const std::string &dir) {
    write_sweep_csv(rows, dir + "/sweep.csv");
    std::string s = "set terminal pngcairo size 900,540 noenhanced\nset datafile separator ','\n";
    s += "set output " + quote(dir + "/throughput_vs_nodes.png") + "\n";
    s += "set title 'Per-node bidirectional bandwidth vs node count'\n";
    s += "set xlabel 'nodes'\nset ylabel 'MB/s per node (bidirectional)'\nset key bottom left\n";
    const std::string csv = quote(dir + "/sweep.csv");
    s += "plot " + csv +
         " using 1:(strcol(2) eq 'unrestricted' ? $3 : 1/0) every ::1 with linespoints pt 5 title "
         "'unrestricted', ";
    s += csv +
         " using 1:(strcol(2) eq 'restricted' ? $3 : 1/0) every ::1 with linespoints pt 13 title "
         "'restricted'\n";
    return run_gnuplot(s);
}

std::string plot_load_sweep(const std::vector<Results> &rows, const std::string &dir) {
    write_load_sweep_csv(rows, dir + "/load_sweep.csv");
    const std::string csv = quote(dir + "/load_sweep.csv");
    std::string s = "set terminal pngcairo size 900,540 noenhanced\nset datafile separator ','\n";
    s += "set output " + quote(dir + "/latency_vs_load.png") + "\n";
    s += "set title 'Transfer latency against offered load'\n";
    s += "set xlabel 'offered load (fraction of injection capacity)'\nset ylabel 'latency (us)'\n";
    s += "set logscale y\nset key top left\n";
    s += "plot " + csv + " using 1:4 every ::1 with linespoints pt 7 title 'mean', ";
    s += csv + " using 1:6 every ::1 with linespoints pt 5 title 'p99', ";
    s += csv + " using 1:7 every ::1 with lines dt 2 title 'zero load'\n";
    return run_gnuplot(s);
}

}  // namespace sansim
