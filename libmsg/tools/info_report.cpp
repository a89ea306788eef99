// msg-info's report (info_report.hpp): read from the same code msg_init runs, so that it says
// what a rank started here would do, not what the documentation hopes.
#include "info_report.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "common/config.hpp"
#include "msg/msg.h"
#include "protocol/protocol_choice.hpp"
#include "transport/registry.hpp"
#include "transport/transport.hpp"
#include "viaduct/env.hpp"

namespace msg::tools {

namespace {

using nlohmann::json;

std::string text_or(const char *s, const char *otherwise) {
    return s != nullptr && s[0] != '\0' ? s : otherwise;
}

std::string number(unsigned long long n) {
    return std::to_string(n);
}

// The value msg_init would use for each VIADUCT_* setting, as text, by the setting's name.
std::map<std::string, std::string> effective_values(const msg_config_t &c) {
    const char *protocol = msg_protocol_name(c.long_protocol);
    return {
        {"VIADUCT_PROVIDER", text_or(c.provider, "shm on one host, else tcp;ofi_rxm")},
        {"VIADUCT_PROTOCOL", protocol != nullptr ? protocol : "?"},
        {"VIADUCT_RESTRICTED", c.restricted ? "restricted" : "unrestricted"},
        {"VIADUCT_EAGER_MAX", number(c.eager_max)},
        {"VIADUCT_BUFFER_SIZE", number(c.buffer_size)},
        {"VIADUCT_CREDITS", number(static_cast<unsigned>(c.credits))},
        {"VIADUCT_ACTIVE_PEERS", number(static_cast<unsigned>(active_peers(c)))},
        {"VIADUCT_TIMEOUT_MS", number(static_cast<unsigned>(c.timeout_ms))},
        {"VIADUCT_SPIN_US", c.spin_us == MSG_SPIN_AUTO ? std::string("auto")
                                                       : number(static_cast<unsigned>(c.spin_us))},
        {"VIADUCT_UNEXPECTED_BYTES", number(c.unexpected_bytes)},
        {"VIADUCT_UNEXPECTED_COUNT", number(c.unexpected_count)},
        {"VIADUCT_TRANSPORT", transport_name(c)},
        {"VIADUCT_BOOTSTRAP", text_or(c.bootstrap, "auto")},
        {"VIADUCT_HEARTBEAT_MS",
         number(static_cast<unsigned>(heartbeat_ms(c.timeout_ms, c.heartbeat_ms)))},
        {"VIADUCT_SHM_CMA", c.shm_cma ? "on" : "off"},
        {"VIADUCT_VERBS_DEVICE", text_or(c.verbs_device, "the first with an IPv4 address")},
        {"VIADUCT_VERBS_ADDR", text_or(c.verbs_addr, "the device's first IPv4 address")},
        {"VIADUCT_VERBS_MR_CACHE", number(c.verbs_mr_cache)},
        {"VIADUCT_VERBS_MR_CACHE_BYTES", number(c.verbs_mr_cache_bytes)},
        {"VIADUCT_DEBUG", c.debug ? "on" : "off"},
        {"VIADUCT_TRACE", text_or(c.trace, "none")},
        {"VIADUCT_TRACE_RECORDS", number(c.trace_records)},
        {"VIADUCT_LOG_LEVEL", c.log_level == MSG_LOG_ERROR   ? "error"
                              : c.log_level == MSG_LOG_INFO  ? "info"
                              : c.log_level == MSG_LOG_DEBUG ? "debug"
                                                             : "warn"},
    };
}

json settings_report(const msg_config_t &c) {
    const std::map<std::string, std::string> values = effective_values(c);
    json out = json::array();
    for (const std::string &name : setting_names()) {
        const auto value = values.find(name);
        const char *env = viaduct::env::get(name.c_str(), false);
        out.push_back({{"name", name},
                       {"environment", env != nullptr ? json(env) : json(nullptr)},
                       {"source", env != nullptr ? "environment" : "default"},
                       {"value", value != values.end() ? value->second : ""}});
    }
    return out;
}

json table_json(const ProtocolChoice &choice) {
    json out = json::array();
    for (const ProtocolChoice::Range &r : choice.ranges())
        out.push_back({{"max_bytes", r.max_bytes == SIZE_MAX ? json(nullptr) : json(r.max_bytes)},
                       {"protocol", msg_protocol_name(r.protocol)}});
    return out;
}

// Both modes' tables, each from the tuning file when it has one for them (tuning.hpp).
json protocol_report(const msg_config_t &c, const std::string &provider) {
    const ProtocolChoice unrestricted(c.long_protocol, provider, false);
    const ProtocolChoice restricted(c.long_protocol, provider, true);
    return {{"provider", provider},
            {"configured", msg_protocol_name(c.long_protocol)},
            {"mode", c.restricted ? "restricted" : "unrestricted"},
            {"eager_max", c.eager_max},
            {"tables",
             {{"unrestricted", table_json(unrestricted)}, {"restricted", table_json(restricted)}}},
            {"sources",
             {{"unrestricted", unrestricted.source()}, {"restricted", restricted.source()}}}};
}

json providers_report(const std::string &shown, bool all) {
    json out = json::array();
    for (const std::string &name : ofi_provider_names()) {
        json p = {{"name", name}};
        if (all || name == shown) {
            const OfiProviderSurvey s = survey_ofi_provider(name);
            p["usable"] = s.usable;
            if (s.usable) {
                p["opens_as"] = s.opens_as;
                p["rma_read"] = s.rma_read;
                p["rma_write"] = s.rma_write;
                p["domain"] = s.domain;
            } else {
                p["why"] = s.why;
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

// What each launcher does when a rank fails (docs/libmsg-guide.md, seen with Slurm 22.05 and
// Open MPI 4.1): only msgrun lets the survivors go on and tells them.
json launchers_report() {
    return json::array({{{"launcher", "msgrun"},
                         {"on_rank_failure",
                          "the survivors go on; operations with the failed rank end with "
                          "MSG_ERR_PEER_FAILED"}},
                        {{"launcher", "srun --mpi=pmix"},
                         {"on_rank_failure",
                          "Slurm's PMIx plugin cancels the step: the survivors are killed "
                          "(no setting changes it)"}},
                        {{"launcher", "mpirun"},
                         {"on_rank_failure",
                          "Open MPI aborts the job: the survivors are killed (with "
                          "orte_abort_on_non_zero_status 0 they are not told, and wait)"}}});
}

json build_report() {
    json transports = json::array();
    for (const TransportStatus &t : msg::transports()) {
        json e = {{"name", t.name}, {"built", t.built}};
        if (!t.built) e["why"] = t.why;
        transports.push_back(std::move(e));
    }
    return {{"transports", transports},
            {"verbs_devices", verbs_devices()},
            {"bootstraps", json::array({{{"name", "tcp"}, {"built", true}},
                                        {{"name", "pmix"}, {"built", pmix_built()}},
                                        {{"name", "single"}, {"built", true}}})}};
}

std::string bytes_text(unsigned long long n) {
    if (n >= (1ull << 20) && n % (1ull << 20) == 0) return number(n >> 20) + " MiB";
    if (n >= 1024 && n % 1024 == 0) return number(n >> 10) + " KiB";
    return number(n) + " B";
}

// "rdma up to 4 MiB, rdma-write above 4 MiB", or "rdma-write at every size".
std::string ranges_text(const json &ranges) {
    if (ranges.size() == 1) return ranges[0]["protocol"].get<std::string>() + " at every size";
    std::string out, below;
    for (const json &r : ranges) {
        out += (out.empty() ? "" : ", ") + r["protocol"].get<std::string>();
        if (r["max_bytes"].is_null()) {
            out += " above " + below;
        } else {
            below = bytes_text(r["max_bytes"].get<unsigned long long>());
            out += " up to " + below;
        }
    }
    return out;
}

void append(std::string &out, const char *format, const std::string &a, const std::string &b = "") {
    char line[512];
    std::snprintf(line, sizeof line, format, a.c_str(), b.c_str());
    out += line;
}

void protocol_text(const json &p, std::string &out) {
    append(out, "\nprotocol table for provider %s (VIADUCT_PROTOCOL=%s", p["provider"],
           p["configured"]);
    append(out, ", mode in force: %s):\n", p["mode"]);
    append(out, "  eager: up to %s B\n", number(p["eager_max"].get<unsigned long long>()));
    for (const char *mode : {"unrestricted", "restricted"}) {
        append(out, "  %-13s %s", std::string(mode) + ":", ranges_text(p["tables"][mode]));
        append(out, " (%s)\n", p["sources"][mode]);
    }
}

}  // namespace

json info_report(const InfoRequest &request) {
    msg_config_t c;
    const int rc = config_from_environment(&c, true);
    int major = 0, minor = 0, patch = 0;
    msg_get_version(&major, &minor, &patch);
    json report = build_report();
    report["version"] = number(major) + "." + number(minor) + "." + number(patch);
    report["libfabric"] = ofi_version();
    if (rc != MSG_OK) {
        report["config_error"] =
            "the VIADUCT_* settings are refused (see above): msg_init would fail with " +
            std::string(msg_strerror(rc));  // the rest: the defaults where a value was bad
    }
    std::string provider =
        !request.provider.empty() ? request.provider : text_or(c.provider, "shm");
    report["launchers"] = launchers_report();
    report["settings"] = settings_report(c);
    report["providers"] = providers_report(provider, request.all_providers);
    // The provider matters where the ofi transport opens, for a job on this host as msgrun
    // starts it.
    if (std::strcmp(chosen_transport(c, true), "ofi") == 0) {
        bool listed = false;
        for (const json &p : report["providers"])
            if (p["name"] == provider) {
                listed = true;
                if (!p["usable"].get<bool>())
                    report["provider_error"] = "libmsg cannot open provider " + provider +
                                               " here: " + p["why"].get<std::string>();
                else if (!p["opens_as"].get<std::string>().empty())
                    provider = p["opens_as"];  // the name the engine's table is chosen by
            }
        if (!listed)
            report["provider_error"] =
                "libfabric lists no provider " + provider + " here: msg_init would fail";
    }
    report["protocol"] = protocol_report(c, provider);
    size_t bytes = 0, buffers = 0;
    if (msg_receive_memory(&c, request.ranks, &bytes, &buffers) == MSG_OK)
        report["receive_memory"] = {
            {"ranks", request.ranks}, {"bytes_per_rank", bytes}, {"buffers_per_rank", buffers}};
    return report;
}

std::string info_text(const json &r) {
    std::string out;
    append(out, "libmsg %s, libfabric %s\n", r["version"], r["libfabric"]);
    for (const char *kind : {"transports", "bootstraps"}) {
        std::string line;
        for (const json &t : r[kind])
            line += (line.empty() ? "" : ", ") + t["name"].get<std::string>() +
                    (t["built"].get<bool>() ? "" : " (not in this build)");
        append(out, "%-11s %s\n", std::string(kind) + ":", line);
    }
    std::string devices;
    for (const json &d : r["verbs_devices"])
        devices += (devices.empty() ? "" : ", ") + d.get<std::string>();
    append(out, "%-11s %s\n",
           "RDMA devices:", devices.empty() ? "none (rdma-core lists none here)" : devices);
    for (const char *problem : {"config_error", "provider_error"})
        if (r.contains(problem)) append(out, "\nerror: %s\n", r[problem].get<std::string>());
    out += "\nsettings (VIADUCT_* over the defaults; * set in the environment):\n";
    for (const json &s : r["settings"]) {
        std::string value = s["value"];
        // What was set, where it reads otherwise ("16K" for 16384, or a value refused).
        if (!s["environment"].is_null() && s["environment"] != value)
            value += " (set to '" + s["environment"].get<std::string>() + "')";
        append(out, s["environment"].is_null() ? "   %-29s %s\n" : " * %-29s %s\n", s["name"],
               value);
    }
    out += "\nlibfabric providers here:\n";
    for (const json &p : r["providers"]) {
        if (!p.contains("usable")) {
            append(out, "  %-20s (not surveyed: --all)\n", p["name"]);
        } else if (p["usable"].get<bool>()) {
            std::string rma = p["rma_read"].get<bool>() ? "read" : "";
            if (p["rma_write"].get<bool>()) rma += rma.empty() ? "write" : " and write";
            if (p["opens_as"] != p["name"]) rma += ", opens as " + p["opens_as"].get<std::string>();
            append(out, "  %-20s usable, RMA %s\n", p["name"], rma.empty() ? "none" : rma);
        } else {
            append(out, "  %-20s not usable: %s\n", p["name"], p["why"]);
        }
    }
    protocol_text(r["protocol"], out);
    out += "\nwhen a rank fails:\n";
    for (const json &l : r["launchers"])
        append(out, "  %-16s %s\n", l["launcher"], l["on_rank_failure"]);
    if (r.contains("receive_memory")) {
        const json &m = r["receive_memory"];
        char line[256];
        std::snprintf(line, sizeof line,
                      "\nreceive memory, a job of %d ranks: %zu buffers, %.1f MiB per rank\n",
                      m["ranks"].get<int>(), m["buffers_per_rank"].get<size_t>(),
                      static_cast<double>(m["bytes_per_rank"].get<size_t>()) / 1048576.0);
        out += line;
    }
    return out;
}

}  // namespace msg::tools
