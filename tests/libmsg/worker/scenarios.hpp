// The scenarios the worker can run; each runs on every rank of a msgrun job, checks everything
// itself and returns only if all checks passed.
#pragma once

#include "harness.hpp"

namespace worker {

void run_payload(const Args &args);             // payload.cpp
void run_payload_huge(const Args &args);        // payload.cpp
void run_wildcard(const Args &args);            // wildcard.cpp
void run_fifo(const Args &args);                // fifo.cpp
void run_outstanding(const Args &args);         // outstanding.cpp
void run_truncation(const Args &args);          // truncation.cpp
void run_threads(const Args &args);             // threads.cpp
void run_peer_failure(const Args &args);        // peer_failure.cpp
void run_idle_cpu(const Args &args);            // idle_cpu.cpp
void run_connect(const Args &args);             // connect.cpp
void run_api_errors(const Args &args);          // api_errors.cpp
void run_registration(const Args &args);        // registration.cpp
void run_probe(const Args &args);               // probe.cpp
void run_receive_memory(const Args &args);      // receive_memory.cpp
void run_protocol_choice(const Args &args);     // protocol_choice.cpp
void run_collectives(const Args &args);         // collectives.cpp
void run_collective_failure(const Args &args);  // collective_failure.cpp
void run_collective_threads(const Args &args);  // collective_threads.cpp

}  // namespace worker
