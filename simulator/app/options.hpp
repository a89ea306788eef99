// sansim's command line as data: every option of one invocation, parsed and checked, with
// the defaults that depend on other options (phase3b's disk and time limit) filled in.
#pragma once
#include <set>
#include <string>

#include "app/run.hpp"
#include "model/params.hpp"
#include "traffic/workload.hpp"

namespace sansim {

struct CommandLine {
    Params params;
    WorkloadOptions workload;
    std::string topology = "dual:64";
    int fabrics = 1;
    std::string routing;                    // empty: the topology's own rule
    std::string vl_rule;                    // empty: the topology's own lane rule
    std::string ties;                       // empty: the topology's own tie-break
    std::string protocol = "unrestricted";  // restricted | unrestricted | both
    std::string sweep;                      // --sweep-nodes list; empty: one node count
    std::string sweep_load;                 // --sweep-load list of offered loads
    double time_limit_us = -1;              // <0: run until the workload finishes
    Measurement measure;                    // --warmup, --measure, --drain-us
    bool json = false;
    bool quiet = false;  // no progress line on stderr (there is none off a terminal either)
    std::string csv_dir, plot_dir;
    std::set<std::string> given;  // the options on the command line
};

// Reads argv; on bad input prints "sansim: <problem>" and exits with status 2.
CommandLine parse_command_line(int argc, char **argv);

const char *help_text();

// The topology's own figures (a file's "defaults" and "flow_control" lines) where the command
// line gave none, and its routing and lane rules unless --routing / --vl-rule override them.
void apply_topology_settings(Topology &topo, CommandLine &cl);

// "sansim: <msg>" on stderr, exit status 2.
[[noreturn]] void die(const std::string &msg);

// "sansim: <msg>; try 'sansim --help'" on stderr, exit status 2: a bad command line.
[[noreturn]] void usage_die(const std::string &msg);

// v as an integer in [lo, hi], or die naming flag.
long to_long(const std::string &flag, const std::string &v, long lo, long hi);

}  // namespace sansim
