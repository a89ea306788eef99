// The global order of records across the cluster: by key bytes (unsigned), then by node, then
// by position in the node's file. It is total, so ties between equal keys split anywhere;
// phase 3a's exact selection and the river sort's splitters both place records in it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace sortapp::cluster {

// One record's place in the global order.
struct Element {
    std::string key;
    uint32_t node = 0;
    uint64_t pos = 0;
};

// <0, 0, >0: by key bytes (unsigned), then node, then position.
inline int compare(const Element &a, const Element &b) {
    const size_t n = a.key.size() < b.key.size() ? a.key.size() : b.key.size();
    if (int c = std::memcmp(a.key.data(), b.key.data(), n); c != 0) return c;
    if (a.key.size() != b.key.size()) return a.key.size() < b.key.size() ? -1 : 1;
    if (a.node != b.node) return a.node < b.node ? -1 : 1;
    if (a.pos != b.pos) return a.pos < b.pos ? -1 : 1;
    return 0;
}

}  // namespace sortapp::cluster
