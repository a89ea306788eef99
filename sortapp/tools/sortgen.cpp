// sortgen: writes records [first, first + N) of a distribution to one file or to P partition
// files, and prints the checksum of what it wrote (the number sortcheck and valsort print).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/generator.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/fatal.hpp"
#include "viaduct/progress.hpp"

using namespace sortapp;

namespace {

struct Options {
    GeneratorSpec spec;
    std::string distribution = "uniform";
    std::uint64_t records = 0, first = 0, partitions = 1;
    std::string output;
    bool json = false, quiet = false;
};

void add_options(CLI::App &app, Options &o) {
    app.description(
        "Writes RECORDS records to OUTPUT (or to OUTPUT.0 .. OUTPUT.P-1 with --partitions P).\n"
        "Record i depends only on (seed, i): partitions made apart equal the whole made at "
        "once.");
    viaduct::cli::add_count(app, "RECORDS", o.records, "how many records (a COUNT: 1M = 10^6)")
        ->required();
    app.add_option("OUTPUT", o.output, "the file to write (the prefix with --partitions)")
        ->required();
    app.add_option("-d,--distribution", o.distribution,
                   "uniform (default), skewed, equal, few, sorted, reverse");
    viaduct::cli::add_size(app, "-s,--seed", o.spec.seed, "random seed (default 0)");
    viaduct::cli::add_count(app, "--first", o.first,
                            "number of the first record (default 0), to make one node's share");
    viaduct::cli::add_count(app, "-p,--partitions", o.partitions,
                            "split the records evenly over P files", 1);
    sortapp::cli::add_format_options(app, o.spec.format);
    app.add_flag("--json", o.json, "print the result as JSON");
    app.add_flag("-q,--quiet", o.quiet, "no progress line on stderr");
    app.footer(std::string(viaduct::cli::count_syntax) + viaduct::cli::size_syntax);
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("sortgen",
                                   [](const std::string &m) { cleanup::abort_process(2, m); });
    // An interrupted generation leaves no half-written file, not even under its temporary name.
    cleanup::install_signal_cleanup([] { return std::string("sortgen"); });
    const std::string tool = "sortgen";
    Options o;
    CLI::App app;
    viaduct::cli::setup(app, tool);
    add_options(app, o);
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    Status s = parse_distribution(o.distribution, o.spec.distribution);
    if (!s) cli::usage_fail(tool, "--distribution: " + s.message());
    s = o.spec.format.validate();
    if (!s) cli::usage_fail(tool, s.message());

    viaduct::Progress progress(tool, "records", o.records, !o.json && !o.quiet);
    Checksum total;
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (std::uint64_t p = 0, before = 0; p < o.partitions; ++p) {
        std::uint64_t lo = o.records * p / o.partitions, hi = o.records * (p + 1) / o.partitions;
        std::string path = o.partitions == 1 ? o.output : o.output + "." + std::to_string(p);
        Checksum c;
        s = generate_file(o.spec, path, o.first + lo, hi - lo, c,
                          [&](std::uint64_t n) { progress.update(before + n); });
        if (!s) cli::fail(tool, s.message());
        before += hi - lo;
        total.add(c);
        if (o.partitions > 1)
            parts.push_back({{"path", path}, {"records", hi - lo}, {"checksum", c.hex()}});
        if (o.partitions > 1 && !o.json) {
            progress.finish();
            std::printf("%s: records %llu, checksum %s\n", path.c_str(),
                        static_cast<unsigned long long>(hi - lo), c.hex().c_str());
        }
    }
    progress.finish();
    if (o.json) {
        nlohmann::ordered_json doc = {{"records", o.records},
                                      {"checksum", total.hex()},
                                      {"distribution", distribution_name(o.spec.distribution)},
                                      {"record_size", o.spec.format.record_size},
                                      {"key_size", o.spec.format.key_size},
                                      {"partitions", parts}};
        std::printf("%s\n", cli::dump(doc).c_str());
    } else {
        std::printf("records: %llu\nchecksum: %s\n", static_cast<unsigned long long>(o.records),
                    total.hex().c_str());
    }
    return 0;
}
