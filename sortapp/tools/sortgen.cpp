// sortgen: writes records [first, first + N) of a distribution to one file or to P partition
// files, and prints the checksum of what it wrote (the number sortcheck and valsort print).
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "sortapp/generator.hpp"

using namespace sortapp;

static const char usage[] =
    "usage: sortgen [options] RECORDS OUTPUT\n"
    "  Writes RECORDS records to OUTPUT (or to OUTPUT.0 .. OUTPUT.P-1 with --partitions P).\n"
    "  Record i depends only on (seed, i): partitions made apart equal the whole made at once.\n"
    "  --distribution D   uniform (default), skewed, equal, few, sorted, reverse\n"
    "  --seed N           random seed (default 0)\n"
    "  --first I          number of the first record (default 0), to make one node's share\n"
    "  --partitions P     split the records evenly over P files\n"
    "  --record-size N    bytes per record (default 100)\n"
    "  --key-size N       key bytes at the front of each record (default 10)\n"
    "  --json             print the result as JSON\n";

int main(int argc, char **argv) {
    const std::string tool = "sortgen";
    GeneratorSpec spec;
    std::uint64_t first = 0, partitions = 1;
    bool json = false;
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], v;
        if (a == "-h" || a == "--help") {
            std::fputs(usage, stdout);
            return 0;
        } else if (cli::format_option(tool, argc, argv, i, spec.format)) {
        } else if (cli::option(tool, argc, argv, i, "--distribution", v)) {
            Status s = parse_distribution(v, spec.distribution);
            if (!s) cli::fail(tool, s.message());
        } else if (cli::option(tool, argc, argv, i, "--seed", v)) {
            spec.seed = cli::size_value(tool, "--seed", v);
        } else if (cli::option(tool, argc, argv, i, "--first", v)) {
            first = cli::size_value(tool, "--first", v);
        } else if (cli::option(tool, argc, argv, i, "--partitions", v)) {
            partitions = cli::size_value(tool, "--partitions", v);
            if (partitions == 0) cli::fail(tool, "--partitions must be at least 1");
        } else if (a == "--json") {
            json = true;
        } else if (a.size() > 1 && a[0] == '-') {
            cli::fail(tool, "unknown option " + a + "\n" + usage);
        } else {
            args.push_back(a);
        }
    }
    if (args.size() != 2) cli::fail(tool, std::string("expected RECORDS and OUTPUT\n") + usage);
    Status s = spec.format.validate();
    if (!s) cli::fail(tool, s.message());
    std::uint64_t records = cli::size_value(tool, "RECORDS", args[0]);
    Checksum total;
    std::string parts_json;
    for (std::uint64_t p = 0; p < partitions; ++p) {
        std::uint64_t lo = records * p / partitions, hi = records * (p + 1) / partitions;
        std::string path = partitions == 1 ? args[1] : args[1] + "." + std::to_string(p);
        Checksum c;
        s = generate_file(spec, path, first + lo, hi - lo, c);
        if (!s) cli::fail(tool, s.message());
        total.add(c);
        if (partitions > 1) {
            if (json) {
                parts_json += std::string(parts_json.empty() ? "" : ", ") + "{\"path\": \"" + path +
                              "\", \"records\": " + std::to_string(hi - lo) + ", \"checksum\": \"" +
                              c.hex() + "\"}";
            } else {
                std::printf("%s: records %llu, checksum %s\n", path.c_str(),
                            static_cast<unsigned long long>(hi - lo), c.hex().c_str());
            }
        }
    }
    if (json) {
        std::printf(
            "{\"records\": %llu, \"checksum\": \"%s\", \"distribution\": \"%s\", "
            "\"record_size\": %zu, \"key_size\": %zu, \"partitions\": [%s]}\n",
            static_cast<unsigned long long>(records), total.hex().c_str(),
            distribution_name(spec.distribution), spec.format.record_size, spec.format.key_size,
            parts_json.c_str());
    } else {
        std::printf("records: %llu\nchecksum: %s\n", static_cast<unsigned long long>(records),
                    total.hex().c_str());
    }
    return 0;
}
