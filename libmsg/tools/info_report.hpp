// What libmsg would do here, for msg-info and msgrun --info: its version, the transports and
// bootstraps this build has, the libfabric providers it could open, the settings in force (the
// VIADUCT_* variables over the defaults), the protocol table they give and the receive memory
// of a job, as one JSON object and as text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace msg::tools {

struct InfoRequest {
    int ranks = 2;               // the job size the receive memory is figured for
    std::string provider;        // the provider whose table is shown; empty: the configured one
    bool all_providers = false;  // survey every provider libfabric lists (each fi_getinfo)
};

// The report. "config_error" is set when the VIADUCT_* settings are refused (msg_init would
// fail with MSG_ERR_CONFIG; the rest is then filled with the defaults for the values refused),
// "provider_error" when the provider in force is one libfabric does not list here or one
// libmsg cannot open.
nlohmann::json info_report(const InfoRequest &request);

// The report as text, for a person.
std::string info_text(const nlohmann::json &report);

}  // namespace msg::tools
