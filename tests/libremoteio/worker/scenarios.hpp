// libremoteio's multi-process scenarios, one per file; each runs on every rank.
#pragma once

#include "rio_harness.hpp"

namespace riotest {

void run_roundtrip(const Args &args);
void run_ipc_and_io(const Args &args);
void run_outstanding(const Args &args);
void run_violations(const Args &args);
void run_killed_peer(const Args &args);
void run_shutdown_load(const Args &args);
void run_threads(const Args &args);
void run_handles(const Args &args);
void run_withheld_data(const Args &args);
void run_finalize_stuck(const Args &args);

}  // namespace riotest
