// Scenario "receive_memory": a job whose receive buffers are more than a process may have is
// refused by msg_init on every rank with MSG_ERR_NO_MEMORY and a message that names the need
// and the settings that lower it, before it connects (nothing waits for a timeout).
#include <sys/resource.h>

#include <cstring>
#include <string>

#include "scenarios.hpp"

namespace worker {
namespace {

std::string said;

void capture(void *, int level, const char *message) {
    if (level == MSG_LOG_ERROR) said += message;
}

}  // namespace

void run_receive_memory(const Args &) {
    // 1 GiB of data is what this process may have; the job's buffers take 64 of 64 MiB.
    struct rlimit rl {};
    WCHECK(getrlimit(RLIMIT_DATA, &rl) == 0, "getrlimit: %s", std::strerror(errno));
    rl.rlim_cur = rlim_t{1} << 30;
    WCHECK(setrlimit(RLIMIT_DATA, &rl) == 0, "setrlimit: %s", std::strerror(errno));
    msg_config_t config;
    WSTATUS(msg_config_init(&config), MSG_OK);
    config.buffer_size = size_t{64} << 20;
    config.credits = 62;
    size_t need = 0;
    WSTATUS(msg_receive_memory(&config, 2, &need, nullptr), MSG_OK);
    WCHECK(need == (size_t{4} << 30), "msg_receive_memory: %zu B for 2 ranks", need);
    WSTATUS(msg_set_log_handler(capture, nullptr), MSG_OK);
    msg_context_t *ctx = nullptr;
    WSTATUS(msg_init(&config, &ctx), MSG_ERR_NO_MEMORY);
    WSTATUS(msg_set_log_handler(nullptr, nullptr), MSG_OK);
    WCHECK(ctx == nullptr, "msg_init failed but gave a context");
    for (const char *part : {"receive buffers for 1 peer need", "need 4096.0 MiB", "1024.0 MiB",
                             "VIADUCT_BUFFER_SIZE", "VIADUCT_ACTIVE_PEERS"})
        WCHECK(said.find(part) != std::string::npos, "msg_init's error lacks '%s': %s", part,
               said.c_str());
}

}  // namespace worker
