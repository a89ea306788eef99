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
#include "viaduct/cli.hpp"

namespace sortapp {

namespace {

// Fills the options; -1 when the probe goes on, else the exit status (0 after --help or
// --version, 2 after a bad command line).
int parse_probe(int argc, char **argv, DiskProbeOptions &o, bool &json) {
    const SortOptions sort;
    o.dir = ".";
    o.io_size = sort.io_size;
    o.io_depth = sort.io_depth;
    o.cache_path = default_disk_cache_path();
    o.remeasure = true;
    CLI::App app;
    viaduct::cli::setup(app, "sortapp probe");
    app.description(
        "Measures the scratch disk the way the sort uses it (read, write, and both at once) and\n"
        "updates the cache of figures the sorts' expectations come from.");
    app.add_option("--scratch", o.dir,
                   "directory on the disk to measure (default: .); a probe file is written "
                   "there and removed")
        ->type_name("DIR");
    using viaduct::cli::add_size;
    add_size(app, "--io-size", o.io_size, "bytes per request (default: the sort's, 2M)", 1);
    app.add_option("--io-depth", o.io_depth, "requests outstanding (default: the sort's, 15)")
        ->check(CLI::Range(1u, 1024u));
    add_size(app, "--probe-size", o.bytes, "bytes each sweep moves at most (default 256M)", 1);
    app.add_option("--max-seconds", o.max_seconds, "each sweep stops after this long (default 5)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.001, 3600.0));
    app.add_option("--disk-cache", o.cache_path,
                   "where figures are kept (default ~/.cache/viaduct/sortapp-disk.json)")
        ->type_name("PATH");
    app.add_flag_function(
        "--no-cache", [&o](std::int64_t) { o.cache_path.clear(); }, "measure and print only");
    app.add_flag("--json", json, "print the figures as one JSON object");
    return viaduct::cli::parse(app, argc, argv);
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
