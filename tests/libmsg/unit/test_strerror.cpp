// msg_strerror: distinct readable text for every status code, and a safe answer for any other.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstring>
#include <set>
#include <string>

TEST_CASE("msg_strerror describes every status code distinctly", "[strerror]") {
    std::set<std::string> texts;
    for (int code = MSG_OK; code >= MSG_ERR_RESERVED_TAG; --code) {
        INFO("status " << code);
        const char *text = msg_strerror(code);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 3);
        CHECK(texts.insert(text).second);
    }
    CHECK(texts.size() == 16);
}

TEST_CASE("msg_strerror answers unknown codes without claiming a known meaning", "[strerror]") {
    std::set<std::string> known;
    for (int code = MSG_OK; code >= MSG_ERR_RESERVED_TAG; --code) known.insert(msg_strerror(code));
    for (int code : {1, 2, MSG_ERR_RESERVED_TAG - 1, -100, -1000, INT_MIN, INT_MAX}) {
        INFO("status " << code);
        const char *text = msg_strerror(code);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 0);
        CHECK(known.count(text) == 0);
    }
}

TEST_CASE("msg_strerror wording names the failure", "[strerror]") {
    // Spot checks that each text is about its own code, not a shifted table.
    auto has = [](int code, const char *word) {
        return std::string(msg_strerror(code)).find(word) != std::string::npos;
    };
    CHECK(has(MSG_ERR_TRUNCATED, "truncat"));
    CHECK(has(MSG_ERR_TIMEOUT, "time"));
    CHECK(has(MSG_ERR_PEER_FAILED, "peer"));
    CHECK(has(MSG_ERR_UNKNOWN_RANK, "rank"));
    CHECK(has(MSG_ERR_FINALIZED, "finaliz"));
    CHECK(has(MSG_ERR_BUSY, "busy"));
    CHECK(has(MSG_ERR_CONFIG, "config"));
    CHECK(has(MSG_ERR_CANCELED, "cancel"));
    CHECK(has(MSG_ERR_RESERVED_TAG, "reserved"));
}
