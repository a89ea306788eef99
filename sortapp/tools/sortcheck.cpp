// sortcheck: validates one file or the node-ordered list of a sort's output files: record
// count, order, duplicate keys and the checksum. Summaries of parts validated apart (on each
// node) can be written with --summary-out and combined later with --combine.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "sortapp/validator.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/fatal.hpp"
#include "viaduct/progress.hpp"
#include "viaduct/safe_file.hpp"

using namespace sortapp;

namespace {

// Every file's summary, appended in node order: read from summaries written
// by --summary-out (combine) or made by validating the data files.
Summary summarise(const std::string &tool, const RecordFormat &format,
                  const std::vector<std::string> &files, bool combine, bool show_progress) {
    std::uint64_t bytes = 0, before = 0;
    for (const std::string &f : files) {
        struct stat st {};
        if (::stat(f.c_str(), &st) == 0) bytes += std::uint64_t(st.st_size);
    }
    viaduct::Progress progress(tool, "bytes", bytes, show_progress && !combine);
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
            s = validate_file(format, f, part,
                              [&](std::uint64_t n) { progress.update(before + n); });
            if (!s) cli::fail(tool, s.message());
            struct stat st {};
            if (::stat(f.c_str(), &st) == 0) before += std::uint64_t(st.st_size);
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
        unsigned long long want = 0;
        if (!viaduct::env::parse_count(expect_records.c_str(), &want))
            cli::usage_fail(tool, "--expect-records: '" + expect_records +
                                      "' is not a count (e.g. 5000, 10k, 1M, 4Ki)");
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

struct Options {
    RecordFormat format;
    bool json = false, combine = false, quiet = false;
    std::string summary_out, expect_checksum, expect_records;
    std::vector<std::string> files;
};

void add_options(CLI::App &app, Options &o) {
    app.description(
        "Checks FILE... (in node order) as one sorted sequence. Exit 0: sorted (and the\n"
        "expected checksum/count, if given); 1: not; 2: an error.");
    app.add_option("FILE", o.files, "the files, in node order")->required();
    sortapp::cli::add_format_options(app, o.format);
    app.add_flag("--json", o.json,
                 "print records, sorted, first_unordered, duplicate_keys, checksum");
    app.add_option("--summary-out", o.summary_out, "also write the combined summary to PATH")
        ->type_name("PATH");
    app.add_flag("--combine", o.combine, "FILE... are summaries written by --summary-out");
    app.add_option("--expect-checksum", o.expect_checksum,
                   "fail unless the checksum is HEX (what sortgen printed)")
        ->type_name("HEX");
    app.add_option("--expect-records", o.expect_records,
                   "fail unless there are this many records (1M = 10^6)")
        ->type_name("COUNT");
    app.add_flag("-q,--quiet", o.quiet, "no progress line on stderr");
    app.footer(std::string(viaduct::cli::count_syntax) + viaduct::cli::size_syntax);
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("sortcheck");
    const std::string tool = "sortcheck";
    Options o;
    CLI::App app;
    viaduct::cli::setup(app, tool);
    add_options(app, o);
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    Status s = o.format.validate();
    if (!s) cli::usage_fail(tool, s.message());
    Summary total = summarise(tool, o.format, o.files, o.combine, !o.json && !o.quiet);
    if (!o.summary_out.empty()) {
        const std::string why = viaduct::write_file_atomically(o.summary_out, total.to_text());
        if (!why.empty()) cli::fail(tool, why);
    }
    std::string problems = expectation_problems(tool, total, o.expect_checksum, o.expect_records);
    bool ok = total.sorted() && problems.empty();
    print_summary(total, o.json);
    if (!problems.empty()) std::fprintf(stderr, "sortcheck: %s", problems.c_str());
    return ok ? 0 : 1;
}
