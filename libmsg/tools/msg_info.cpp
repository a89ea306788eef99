// msg-info: what libmsg would do on this host, as fi_info and ucx_info tell of theirs: the
// transports and bootstraps built, the libfabric providers, the settings in force, the
// protocol table and the receive memory of a job. Opens no endpoint and joins no job.
#include <cstdio>
#include <string>

#include "info_report.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/fatal.hpp"

namespace {

const char *kDescription =
    "msg-info [OPTIONS]\n\n"
    "Prints what libmsg would do here with the VIADUCT_* settings in the environment: its\n"
    "version and libfabric's, the transports and bootstraps this build has, the settings in\n"
    "force (those set in the environment marked *), the libfabric providers and whether\n"
    "libmsg can open the one in force (with --all: each one), the protocol table (which\n"
    "protocol moves a message of each size, in both modes) and the receive memory a rank of\n"
    "a job of N ranks allocates. It exits 1, naming the problem, where msg_init would fail:\n"
    "a setting that does not parse (MSG_ERR_CONFIG), or a provider libfabric does not list\n"
    "here or libmsg cannot open.";

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msg-info");
    CLI::App app;
    viaduct::cli::setup(app, "msg-info");
    app.description(kDescription);
    msg::tools::InfoRequest request;
    bool json = false;
    app.add_option("-n,--np", request.ranks, "job size for the receive memory (default 2)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("-p,--provider", request.provider,
                   "the provider whose protocol table is shown (default: VIADUCT_PROVIDER, "
                   "else shm)");
    app.add_flag("--all", request.all_providers,
                 "ask libfabric whether libmsg can open each provider it lists");
    app.add_flag("--json", json, "one JSON object");
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    const nlohmann::json report = msg::tools::info_report(request);
    if (json)
        std::printf("%s\n", report.dump().c_str());
    else
        std::fputs(msg::tools::info_text(report).c_str(), stdout);
    return report.contains("config_error") || report.contains("provider_error") ? 1 : 0;
}
