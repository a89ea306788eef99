// The timeline writer's inside: each sample as a row of documented fields (what the JSON lines
// and the CSV hold), the cpubar/diskbar view both pictures draw, and the files' texts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viaduct/counters.hpp"
#include "viaduct/timeline.hpp"

namespace viaduct::timeline::detail {

// One sample and what happened since the node's previous one (zero rates for its first).
struct Row {
    const Node *node = nullptr;
    const CounterSample *sample = nullptr;
    CounterRates rates;
    double t = 0;  // seconds since the job's first sample
    std::string phase;
    bool device_disk = false;  // the view's disk figures are the device's (see View)
};

// A numeric field of a row: its name in the files, unit and meaning (docs/timeline.md's table)
// and how many decimals the files keep (0: a whole number).
struct Field {
    const char *name;
    const char *unit;
    const char *meaning;
    int decimals;
    double (*value)(const Row &);
};

// The fields every row has before the numeric ones: node, host, t, phase.
const std::vector<Field> &leading_fields();
// The numeric fields, in the files' order: the cumulative counters under CounterSample's names,
// then the rates under CounterRates's names, then the view's figures.
const std::vector<Field> &numeric_fields();

// What the cpubar/diskbar view shows of one row: CPU as percent of all the host's CPUs, disk
// and network in MB/s. Disk is the device's traffic when the node's device counters move at
// all, else the process's own (a node whose data device was not found).
struct View {
    double user = 0, sys = 0, other = 0, iowait = 0;
    double disk_read = 0, disk_write = 0, net_sent = 0, net_received = 0;
};
View view_of(const Row &row);

// Every sample of every node, node by node, each node's in time order.
std::vector<Row> rows_of(const Input &in);

std::string jsonl_text(const std::vector<Row> &rows);
std::string csv_text(const std::vector<Row> &rows);
std::string page_text(const Input &in, const std::vector<Row> &rows);
// The gnuplot script that draws the lanes into `png` (a name in gnuplot's working directory).
std::string gnuplot_script(const Input &in, const std::vector<Row> &rows, const std::string &png);

// `s` as a JSON string literal (bytes that are not UTF-8 replaced by U+FFFD).
std::string json_string(const std::string &s);
// `v` rounded to `decimals`, printed without trailing noise ("12.5", "3", "0.125").
std::string number_text(double v, int decimals);

}  // namespace viaduct::timeline::detail
