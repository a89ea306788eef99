// sortcheck: validates one file or the node-ordered list of a sort's output files: record
// count, order, duplicate keys and the checksum. Summaries of parts validated apart (on each
// node) can be written with --summary-out and combined later with --combine.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "sortapp/validator.hpp"

using namespace sortapp;

static const char usage[] =
    "usage: sortcheck [options] FILE...\n"
    "  Checks FILE... (in node order) as one sorted sequence. Exit 0: sorted (and the expected\n"
    "  checksum/count, if given); 1: not; 2: an error.\n"
    "  --record-size N          bytes per record (default 100)\n"
    "  --key-size N             key bytes (default 10)\n"
    "  --json                   print records, sorted, first_unordered, duplicate_keys, checksum\n"
    "  --summary-out PATH       also write the combined summary to PATH\n"
    "  --combine                FILE... are summaries written by --summary-out\n"
    "  --expect-checksum HEX    fail unless the checksum is HEX (what sortgen printed)\n"
    "  --expect-records N       fail unless there are N records\n";

namespace {

// Every file's summary, appended in node order: read from summaries written
// by --summary-out (combine) or made by validating the data files.
Summary summarise(const std::string &tool, const RecordFormat &format,
                  const std::vector<std::string> &files, bool combine) {
    Summary total;
    for (const std::string &f : files) {
        Summary part;
        Status s;
        if (combine) {
            std::ifstream in(f);
            if (!in) cli::fail(tool, "cannot read summary " + f);
            std::stringstream text;
            text << in.rdbuf();
            s = Summary::from_text(text.str(), part);
            if (!s) cli::fail(tool, f + ": " + s.message());
        } else {
            s = validate_file(format, f, part);
            if (!s) cli::fail(tool, s.message());
        }
        total.append(part);
    }
    return total;
}

// How the total differs from --expect-checksum and --expect-records: one line
// per difference, empty when it matches.
std::string expectation_problems(const std::string &tool, const Summary &total,
                                 const std::string &expect_checksum,
                                 const std::string &expect_records) {
    std::string problems;
    if (!expect_checksum.empty()) {
        Checksum want;
        if (!Checksum::parse_hex(expect_checksum, want)) cli::fail(tool, "bad --expect-checksum");
        if (!(want == total.checksum))
            problems += "checksum " + total.checksum.hex() + " differs from the expected " +
                        want.hex() + "\n";
    }
    if (!expect_records.empty()) {
        std::uint64_t want = cli::size_value(tool, "--expect-records", expect_records);
        if (want != total.records)
            problems +=
                std::to_string(total.records) + " records, expected " + std::to_string(want) + "\n";
    }
    return problems;
}

void print_summary(const Summary &total, bool json) {
    if (json) {
        std::printf("%s\n", total.to_json().c_str());
        return;
    }
    std::printf("records: %llu\nchecksum: %s\nduplicate keys: %llu\n",
                static_cast<unsigned long long>(total.records), total.checksum.hex().c_str(),
                static_cast<unsigned long long>(total.duplicate_keys));
    if (total.sorted()) {
        std::printf("sorted: yes\n");
    } else {
        std::printf("sorted: NO, first unordered record %llu (%llu unordered in all)\n",
                    static_cast<unsigned long long>(*total.first_unordered),
                    static_cast<unsigned long long>(total.unordered));
    }
}

}  // namespace

int main(int argc, char **argv) {
    const std::string tool = "sortcheck";
    RecordFormat format;
    bool json = false, combine = false;
    std::string summary_out, expect_checksum, expect_records;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], v;
        if (a == "-h" || a == "--help") {
            std::fputs(usage, stdout);
            return 0;
        } else if (cli::format_option(tool, argc, argv, i, format)) {
        } else if (cli::option(tool, argc, argv, i, "--summary-out", v)) {
            summary_out = v;
        } else if (cli::option(tool, argc, argv, i, "--expect-checksum", v)) {
            expect_checksum = v;
        } else if (cli::option(tool, argc, argv, i, "--expect-records", v)) {
            expect_records = v;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--combine") {
            combine = true;
        } else if (a.size() > 1 && a[0] == '-') {
            cli::fail(tool, "unknown option " + a + "\n" + usage);
        } else {
            files.push_back(a);
        }
    }
    if (files.empty()) cli::fail(tool, std::string("no file given\n") + usage);
    Status s = format.validate();
    if (!s) cli::fail(tool, s.message());
    Summary total = summarise(tool, format, files, combine);
    if (!summary_out.empty()) {
        std::ofstream out(summary_out);
        out << total.to_text();
        if (!out) cli::fail(tool, "cannot write " + summary_out);
    }
    std::string problems = expectation_problems(tool, total, expect_checksum, expect_records);
    bool ok = total.sorted() && problems.empty();
    print_summary(total, json);
    if (!problems.empty()) std::fprintf(stderr, "sortcheck: %s", problems.c_str());
    return ok ? 0 : 1;
}
