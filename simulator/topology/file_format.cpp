// The topology file format (docs/sansim.md): one statement per line, '#' starts a comment.
//   nodes 8 [fabrics 2]
//   router NAME ports 6 [fabric x|y] [level 0] [at X Y [Z]] [group G]
//   link END END [mbps 50 | gbps 100] [delay_ns 10] [dateline]
//                                             END is n3 / n3.x / n3.y or NAME.PORT;
//                                             mbps in [0.001, 1e6], delay_ns in [0, 1e9]
//   routing updown|xy|shortest|minimal|valiant|table
//   route NAME n3 PORT                         (with "routing table")
//   vl_rule none|dateline|group|spread
//   defaults [mbps M | gbps G] [delay_ns D] [switch_ns S]
//   flow_control packet|credit [vls N] [vl_buffer_bytes B] [credit_bytes C]
// Every error names file:line.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "topology/topology.hpp"

namespace sansim {
namespace {

// A link's own figures: at least what the model can time (1e6 ps per byte),
// at most one picosecond per byte; delays up to a second.
constexpr double kMinMbps = 0.001;
constexpr double kMaxMbps = 1e6;
constexpr double kMaxDelayNs = 1e9;

struct Parser {
    std::string origin;
    int line = 0;
    Topology t;
    std::map<std::string, int> router_index;

    [[noreturn]] void fail(const std::string &what) const {
        throw TopologyError(origin + ":" + std::to_string(line) + ": " + what);
    }

    long number(const std::string &word, const char *what, long lo, long hi) const {
        std::size_t used = 0;
        long v = 0;
        try {
            v = std::stol(word, &used);
        } catch (const std::exception &) {
            fail(std::string("expected a number for ") + what + ", got '" + word + "'");
        }
        if (used != word.size())
            fail(std::string("expected a number for ") + what + ", got '" + word + "'");
        if (v < lo || v > hi)
            fail(std::string(what) + " " + word + " out of range [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]");
        return v;
    }

    // stod also reads "nan", "inf" and 1e300, which the model would turn into
    // garbage (or undefined) integer times: only finite values in [lo, hi] pass.
    double real(const std::string &word, const char *what, double lo, double hi) const {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(word, &used);
        } catch (const std::exception &) {
            fail(std::string("expected a number for ") + what + ", got '" + word + "'");
        }
        if (used != word.size() || !std::isfinite(v))
            fail(std::string("bad ") + what + " '" + word + "'");
        if (v < lo || v > hi) {
            std::ostringstream range;
            range << what << " " << word << " out of range [" << lo << ", " << hi << "]";
            fail(range.str());
        }
        return v;
    }

    // Gb/s as MB/s (125 MB/s per Gb/s), within what the model can time.
    double gbps(const std::string &word) const {
        const double g = real(word, "gbps", kMinMbps / 125, kMaxMbps / 125);
        return std::clamp(g * 125, kMinMbps, kMaxMbps);
    }

    int node_of(const std::string &word) const {
        if (t.nodes == 0) fail("'" + word + "' used before the 'nodes' line");
        const long n = number(word.substr(1), "node number", 0, t.nodes - 1);
        return static_cast<int>(n);
    }

    Endpoint endpoint(const std::string &word) const {
        const auto dot = word.find('.');
        const std::string dev = word.substr(0, dot);
        const std::string port = dot == std::string::npos ? "" : word.substr(dot + 1);
        if (!dev.empty() && dev[0] == 'n' && router_index.count(dev) == 0 && dev.size() > 1 &&
            std::isdigit(static_cast<unsigned char>(dev[1]))) {
            const int n = node_of(dev);
            int p = 0;
            if (port.empty() || port == "x" || port == "0")
                p = 0;
            else if (port == "y" || port == "1")
                p = 1;
            else
                fail("node port must be x or y, got '" + port + "'");
            if (p >= t.fabrics) fail("node port " + word + " but the topology has one fabric");
            return Endpoint{n, p};
        }
        const auto it = router_index.find(dev);
        if (it == router_index.end()) fail("link to undefined router '" + dev + "'");
        if (port.empty()) fail("router endpoint needs a port: " + dev + ".PORT");
        const auto &r = t.routers[static_cast<std::size_t>(it->second)];
        const long p = number(port, "port", 0, 1 << 15);
        if (p >= r.ports)
            fail("port " + port + " of router " + dev + " is out of range (it has " +
                 std::to_string(r.ports) + " ports)");
        return Endpoint{t.router_dev(it->second), static_cast<int>(p)};
    }

    void nodes_statement(const std::vector<std::string> &w) {
        if (t.nodes != 0) fail("second 'nodes' line");
        if (w.size() != 2 && w.size() != 4) fail("usage: nodes N [fabrics 1|2]");
        t.nodes = static_cast<int>(number(w[1], "node count", 1, 1 << 16));
        t.nodes_line = line;
        if (w.size() == 4) {
            if (w[2] != "fabrics") fail("usage: nodes N [fabrics 1|2]");
            t.fabrics = static_cast<int>(number(w[3], "fabric count", 1, 2));
        }
    }

    void router_statement(const std::vector<std::string> &w) {
        if (t.nodes == 0) fail("'router' before the 'nodes' line");
        if (w.size() < 4 || w[2] != "ports")
            fail("usage: router NAME ports N [fabric x|y] [level L] [at X Y [Z]] [group G]");
        if (router_index.count(w[1])) fail("router '" + w[1] + "' defined twice");
        RouterSpec r;
        r.name = w[1];
        r.ports = static_cast<int>(number(w[3], "port count", 1, 1024));
        r.line = line;
        for (std::size_t i = 4; i < w.size(); i += 2) {
            if (i + 1 >= w.size()) fail("'" + w[i] + "' needs a value");
            if (w[i] == "fabric") {
                if (w[i + 1] == "x" || w[i + 1] == "0")
                    r.fabric = 0;
                else if (w[i + 1] == "y" || w[i + 1] == "1")
                    r.fabric = 1;
                else
                    fail("fabric must be x or y");
            } else if (w[i] == "level") {
                r.level = static_cast<int>(number(w[i + 1], "level", 0, 1000));
            } else if (w[i] == "at") {
                if (i + 2 >= w.size()) fail("usage: at X Y");
                r.x = static_cast<int>(number(w[i + 1], "x", 0, 1 << 16));
                r.y = static_cast<int>(number(w[i + 2], "y", 0, 1 << 16));
                r.placed = true;
                ++i;
                if (i + 2 < w.size() && std::isdigit(static_cast<unsigned char>(w[i + 2][0]))) {
                    r.z = static_cast<int>(number(w[i + 2], "z", 0, 1 << 16));
                    ++i;
                }
            } else if (w[i] == "group") {
                r.group = static_cast<int>(number(w[i + 1], "group", 0, 1 << 16));
            } else {
                fail("unknown router attribute '" + w[i] + "'");
            }
        }
        router_index[r.name] = static_cast<int>(t.routers.size());
        t.routers.push_back(r);
    }

    void link_statement(const std::vector<std::string> &w) {
        if (w.size() < 3) fail("usage: link END END [mbps M | gbps G] [delay_ns D] [dateline]");
        LinkSpec l;
        l.a = endpoint(w[1]);
        l.b = endpoint(w[2]);
        l.line = line;
        for (std::size_t i = 3; i < w.size(); i += 2) {
            if (w[i] == "dateline") {  // a flag: no value
                l.dateline = true;
                --i;
                continue;
            }
            if (i + 1 >= w.size()) fail("'" + w[i] + "' needs a value");
            if (w[i] == "mbps")
                l.mbps = real(w[i + 1], "mbps", kMinMbps, kMaxMbps);
            else if (w[i] == "gbps")
                l.mbps = gbps(w[i + 1]);
            else if (w[i] == "delay_ns")
                l.delay_ns = real(w[i + 1], "delay_ns", 0, kMaxDelayNs);
            else
                fail("unknown link attribute '" + w[i] + "'");
        }
        t.links.push_back(l);
    }

    void route_statement(const std::vector<std::string> &w) {
        if (w.size() != 4) fail("usage: route ROUTER nDST PORT");
        const auto it = router_index.find(w[1]);
        if (it == router_index.end()) fail("route for undefined router '" + w[1] + "'");
        RouteSpec r;
        r.router = it->second;
        if (w[2].empty() || w[2][0] != 'n') fail("route destination must be a node (nN)");
        r.dst = node_of(w[2]);
        r.port = static_cast<int>(number(w[3], "port", 0, 1 << 15));
        r.line = line;
        t.routes.push_back(r);
    }

    // The file's own link rate, link delay and switch delay (command-line options win).
    void defaults_statement(const std::vector<std::string> &w) {
        const char *usage = "usage: defaults [mbps M | gbps G] [delay_ns D] [switch_ns S]";
        if (w.size() < 3 || w.size() % 2 == 0) fail(usage);
        FabricDefaults &d = t.defaults;
        for (std::size_t i = 1; i + 1 < w.size(); i += 2) {
            if (w[i] == "mbps")
                d.link_mbps = real(w[i + 1], "mbps", kMinMbps, kMaxMbps);
            else if (w[i] == "gbps")
                d.link_mbps = gbps(w[i + 1]);
            else if (w[i] == "delay_ns")
                d.link_delay_ns = real(w[i + 1], "delay_ns", 0, kMaxDelayNs);
            else if (w[i] == "switch_ns")
                d.hop_latency_ns = real(w[i + 1], "switch_ns", 0, kMaxDelayNs);
            else
                fail("unknown defaults attribute '" + w[i] + "' (" + usage + ")");
        }
    }

    // Link-level flow control, virtual lanes and their buffers (command-line options win).
    void flow_control_statement(const std::vector<std::string> &w) {
        const char *usage =
            "usage: flow_control packet|credit [vls N] [vl_buffer_bytes B] [credit_bytes C]";
        if (w.size() < 2 || w.size() % 2 != 0) fail(usage);
        FabricDefaults &d = t.defaults;
        if (w[1] != "packet" && w[1] != "credit") fail(usage);
        d.flow_control = w[1];
        for (std::size_t i = 2; i + 1 < w.size(); i += 2) {
            if (w[i] == "vls") {
                d.vls = static_cast<int>(number(w[i + 1], "vls", 1, 16));
            } else if (w[i] == "vl_buffer_bytes") {
                d.vl_buffer_bytes =
                    static_cast<int>(number(w[i + 1], "vl_buffer_bytes", 1, 1 << 24));
            } else if (w[i] == "credit_bytes") {
                d.credit_bytes = static_cast<int>(number(w[i + 1], "credit_bytes", 1, 1 << 16));
                if ((d.credit_bytes & (d.credit_bytes - 1)) != 0)
                    fail("credit_bytes must be a power of two");
            } else {
                fail("unknown flow_control attribute '" + w[i] + "' (" + usage + ")");
            }
        }
    }

    void statement(const std::vector<std::string> &w) {
        const std::string &k = w[0];
        if (k == "nodes") {
            nodes_statement(w);
        } else if (k == "router") {
            router_statement(w);
        } else if (k == "link") {
            link_statement(w);
        } else if (k == "routing") {
            if (w.size() != 2) fail("usage: routing updown|xy|shortest|minimal|valiant|table");
            if (w[1] != "updown" && w[1] != "xy" && w[1] != "shortest" && w[1] != "minimal" &&
                w[1] != "valiant" && w[1] != "table")
                fail("unknown routing rule '" + w[1] + "'");
            t.routing = w[1];
        } else if (k == "route") {
            route_statement(w);
        } else if (k == "vl_rule") {
            if (w.size() != 2 ||
                (w[1] != "none" && w[1] != "dateline" && w[1] != "group" && w[1] != "spread"))
                fail("usage: vl_rule none|dateline|group|spread");
            t.vl_rule = w[1];
        } else if (k == "defaults") {
            defaults_statement(w);
        } else if (k == "flow_control") {
            flow_control_statement(w);
        } else {
            fail("unknown statement '" + k + "'");
        }
    }
};

}  // namespace

Topology parse_topology(const std::string &text, const std::string &origin) {
    Parser p;
    p.origin = origin;
    p.t.name = origin;
    std::istringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
        ++p.line;
        const auto hash = raw.find('#');
        if (hash != std::string::npos) raw.resize(hash);
        std::istringstream words(raw);
        std::vector<std::string> w;
        for (std::string s; words >> s;) w.push_back(s);
        if (!w.empty()) p.statement(w);
    }
    if (p.t.nodes == 0) throw TopologyError(origin + ": no 'nodes' line");
    if (p.t.routing != "table" && !p.t.routes.empty())
        throw TopologyError(origin + ":" + std::to_string(p.t.routes.front().line) +
                            ": 'route' lines need 'routing table'");
    return p.t;
}

Topology read_topology_file(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw TopologyError(path + ": cannot open topology file");
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_topology(ss.str(), path);
}

}  // namespace sansim
