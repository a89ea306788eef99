// `sortapp probe`: NOW-Sort's disk configuration tool. Measures the scratch disk with the
// sort's request size and depth (read, write, and both at once), prints the figures with the
// conditions they were taken under, and keeps them in the cache the sorts read.
#include "probe.hpp"

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/sort_options.hpp"

namespace sortapp {

namespace {

const char probe_usage[] =
    "usage: sortapp probe [options]\n"
    "  Measures the scratch disk the way the sort uses it and updates the cache of figures\n"
    "  the sorts' expectations come from.\n"
    "  --scratch DIR          directory on the disk to measure (default: .); a probe file is\n"
    "                         written there and removed\n"
    "  --io-size SIZE         bytes per request (default: the sort's, 2M)\n"
    "  --io-depth N           requests outstanding (default: the sort's, 15)\n"
    "  --probe-size SIZE      bytes each sweep moves at most (default 256M)\n"
    "  --max-seconds S        each sweep stops after this long (default 5)\n"
    "  --disk-cache PATH      where figures are kept (default ~/.cache/viaduct/sortapp-disk.json)\n"
    "  --no-cache             measure and print only\n"
    "  --json                 print the figures as one JSON object\n";

// Fills the options; -1 when the probe goes on, else the exit status.
int parse_probe(int argc, char **argv, DiskProbeOptions &o, bool &json) {
    const std::string tool = "sortapp probe";
    const SortOptions sort;
    o.dir = ".";
    o.io_size = sort.io_size;
    o.io_depth = sort.io_depth;
    o.cache_path = default_disk_cache_path();
    o.remeasure = true;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], v;
        if (arg == "-h" || arg == "--help") {
            std::fputs(probe_usage, stdout);
            return 0;
        } else if (cli::option(tool, argc, argv, i, "--scratch", v)) {
            o.dir = v;
        } else if (cli::option(tool, argc, argv, i, "--io-size", v)) {
            o.io_size = std::size_t(cli::size_value(tool, "--io-size", v));
        } else if (cli::option(tool, argc, argv, i, "--io-depth", v)) {
            o.io_depth = unsigned(cli::size_value(tool, "--io-depth", v));
            if (o.io_depth == 0 || o.io_depth > 1024) cli::fail(tool, "--io-depth: 1 to 1024");
        } else if (cli::option(tool, argc, argv, i, "--probe-size", v)) {
            o.bytes = cli::size_value(tool, "--probe-size", v);
        } else if (cli::option(tool, argc, argv, i, "--max-seconds", v)) {
            char *end = nullptr;
            o.max_seconds = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(o.max_seconds > 0) || o.max_seconds > 3600)
                cli::fail(tool,
                          "--max-seconds: '" + v + "' is not a number of seconds in (0, 3600]");
        } else if (cli::option(tool, argc, argv, i, "--disk-cache", v)) {
            o.cache_path = v;
        } else if (arg == "--no-cache") {
            o.cache_path.clear();
        } else if (arg == "--json") {
            json = true;
        } else {
            cli::fail(tool, "unknown argument " + arg + "\n" + probe_usage);
        }
    }
    return -1;
}

void print_text(const DiskBandwidth &b, const DiskProbeOptions &o) {
    const DiskConditions &c = b.conditions;
    std::printf("scratch disk %s (device %s)\n", o.dir.c_str(), c.device.c_str());
    std::printf("read  %8.1f MB/s\nwrite %8.1f MB/s\nmixed %8.1f MB/s (read + write at once)\n",
                b.read_mb_s, b.write_mb_s, b.mixed_mb_s);
    std::printf(
        "measured %s in %.1f s: %llu-byte requests, %u deep, %.1f MB file, %s, load average "
        "%.2f\n",
        c.date.c_str(), c.seconds, static_cast<unsigned long long>(c.io_size), c.io_depth,
        c.file_bytes / 1e6, c.direct ? "O_DIRECT" : "page cache dropped", c.load_average);
    if (!o.cache_path.empty()) std::printf("cached in %s\n", o.cache_path.c_str());
}

}  // namespace

int probe_main(int argc, char **argv) {
    cleanup::install_signal_cleanup([] { return std::string("sortapp probe"); });
    DiskProbeOptions o;
    bool json = false;
    if (int rc = parse_probe(argc, argv, o, json); rc >= 0) return rc;
    DiskBandwidth figure;
    Status s = probe_disk(o, figure);
    if (!s) cli::fail("sortapp probe", "measuring " + o.dir + ": " + s.message());
    if (json)
        std::printf("%s\n", disk_figure_json(figure).c_str());
    else
        print_text(figure, o);
    return 0;
}

}  // namespace sortapp
