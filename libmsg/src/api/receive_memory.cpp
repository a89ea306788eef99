// msg_receive_memory: what a job of N ranks' receive buffers take per rank.
// Apart from the rest of set-up, so a program that only asks (msgrun) does not
// link the fabric.
#include <cstdint>
#include <string>

#include "common/config.hpp"
#include "protocol/receive_pool.hpp"

extern "C" int msg_receive_memory(const msg_config_t *config, int size, size_t *bytes,
                                  size_t *buffers) {
    using namespace msg;
    if (bytes == nullptr || size < 1) return MSG_ERR_INVALID_ARG;
    msg_config_t cfg;
    if (config != nullptr) {
        cfg = *config;
    } else if (int rc = msg_config_init(&cfg); rc != MSG_OK) {
        return rc;
    }
    std::string why;
    if (check_messaging(cfg, &why) != MSG_OK) return MSG_ERR_CONFIG;
    ReceivePlan plan;
    // A fabric's receive queue may hold fewer; the plan is then smaller.
    if (!plan_receives(size, cfg.credits, active_peers(cfg), SIZE_MAX, &plan, &why))
        return MSG_ERR_CONFIG;
    *bytes = plan.buffers() * cfg.buffer_size;
    if (buffers != nullptr) *buffers = plan.buffers();
    return MSG_OK;
}
