// msg_config_t defaults and their VIADUCT_* environment overrides.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"
#include "msg/msg.h"

namespace {

// Parses a non-negative integer with an optional K/M/G (binary) suffix.
bool parse_size(const char *text, unsigned long long *out) {
    if (text == nullptr || *text == '\0') return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || text[0] == '-') return false;
    unsigned long long mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = 1ull << 10, ++end;
    else if (*end == 'm' || *end == 'M')
        mult = 1ull << 20, ++end;
    else if (*end == 'g' || *end == 'G')
        mult = 1ull << 30, ++end;
    if (*end != '\0') return false;
    if (v > ~0ull / mult) return false;
    *out = v * mult;
    return true;
}

int bad(const char *name, const char *value) {
    msg::log_error("%s=%s is not valid; using the default", name, value);
    return MSG_ERR_CONFIG;
}

}  // namespace

extern "C" int msg_config_init(msg_config_t *c) {
    if (c == nullptr) return MSG_ERR_INVALID_ARG;
    c->provider = nullptr;
    c->long_protocol = MSG_PROTOCOL_RDMA;
    c->restricted = 0;
    c->eager_max = 8192;
    c->buffer_size = 128 * 1024;
    c->credits = 8;
    c->timeout_ms = 10000;
    c->spin_us = MSG_SPIN_AUTO;

    int rc = MSG_OK;
    const char *v;
    unsigned long long n;
    if ((v = std::getenv("VIADUCT_PROVIDER")) && *v) c->provider = v;
    if ((v = std::getenv("VIADUCT_PROTOCOL"))) {
        if (!std::strcmp(v, "sendrecv"))
            c->long_protocol = MSG_PROTOCOL_SENDRECV;
        else if (!std::strcmp(v, "rdma"))
            c->long_protocol = MSG_PROTOCOL_RDMA;
        else if (!std::strcmp(v, "rdma-write"))
            c->long_protocol = MSG_PROTOCOL_RDMA_WRITE;
        else
            rc = bad("VIADUCT_PROTOCOL", v);
    }
    if ((v = std::getenv("VIADUCT_RESTRICTED"))) {
        if (!std::strcmp(v, "1") || !std::strcmp(v, "restricted"))
            c->restricted = 1;
        else if (!std::strcmp(v, "0") || !std::strcmp(v, "unrestricted"))
            c->restricted = 0;
        else
            rc = bad("VIADUCT_RESTRICTED", v);
    }
    if ((v = std::getenv("VIADUCT_EAGER_MAX"))) {
        if (parse_size(v, &n))
            c->eager_max = n;
        else
            rc = bad("VIADUCT_EAGER_MAX", v);
    }
    if ((v = std::getenv("VIADUCT_BUFFER_SIZE"))) {
        if (parse_size(v, &n))
            c->buffer_size = n;
        else
            rc = bad("VIADUCT_BUFFER_SIZE", v);
    }
    if ((v = std::getenv("VIADUCT_CREDITS"))) {
        if (parse_size(v, &n) && n >= 1 && n <= 1024)
            c->credits = static_cast<int>(n);
        else
            rc = bad("VIADUCT_CREDITS", v);
    }
    if ((v = std::getenv("VIADUCT_TIMEOUT_MS"))) {
        if (parse_size(v, &n) && n >= 1 && n <= 86400000ull)
            c->timeout_ms = static_cast<int>(n);
        else
            rc = bad("VIADUCT_TIMEOUT_MS", v);
    }
    if ((v = std::getenv("VIADUCT_SPIN_US"))) {
        if (!std::strcmp(v, "auto"))
            c->spin_us = MSG_SPIN_AUTO;
        else if (parse_size(v, &n) && n <= 1000000ull)
            c->spin_us = static_cast<int>(n);
        else
            rc = bad("VIADUCT_SPIN_US", v);
    }
    return rc;
}
