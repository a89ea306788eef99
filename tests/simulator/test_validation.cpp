// The paper's ServerNet I figures (§5.2.1) reproduced by the model: link-limited payload
// bandwidth on one link, and outstanding-request-limited bandwidth 4*64/RTT.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "model/network.hpp"

using namespace sansim;

namespace {

struct Sink : TransferClient {
    int done = 0;
    void transfer_done(Network &, std::uint32_t, std::uint64_t) override { ++done; }
};

Params ideal_endpoints() {
    Params p;  // ServerNet I links and routers
    p.pci_mbps = 0;  // no PCI bus: the link is the only limit
    return p;
}

double mbps(const Network &net, std::uint64_t bytes) {
    const Time span = net.stats().last_delivery - net.stats().first_injection;
    return static_cast<double>(bytes) / to_seconds(span) / 1e6;
}

}  // namespace

TEST_CASE("one link carries 40.0 MB/s one way and 33.3 MB/s each way", "[validation]") {
    const std::uint64_t bytes = 256 * 1024;
    {
        Network net(make_chain(0), ideal_endpoints());
        Sink sink;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        REQUIRE(sink.done == 1);
        CHECK(mbps(net, bytes) == Approx(40.0).epsilon(0.002));
    }
    {
        Network net(make_chain(0), ideal_endpoints());
        Sink sink;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.start_transfer(1, 0, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        REQUIRE(sink.done == 2);
        const double each_way = mbps(net, 2 * bytes) / 2;
        CHECK(each_way == Approx(100.0 / 3).epsilon(0.002));
        CHECK(net.nics()[0].rx_payload == bytes);
        CHECK(net.nics()[1].rx_payload == bytes);
    }
    {
        // Reads move the payload in responses: the same 40 MB/s toward the reader.
        Network net(make_chain(0), ideal_endpoints());
        Sink sink;
        net.start_transfer(0, 1, bytes, true, &sink, 0);
        net.run(kMs * 1000);
        REQUIRE(sink.done == 1);
        CHECK(mbps(net, bytes) == Approx(40.0).epsilon(0.002));
        CHECK(net.nics()[0].rx_payload == bytes);
    }
}

TEST_CASE("the PCI bus caps a node at the paper's 33 MB/s out and 19 MB/s both ways",
          "[validation]") {
    const std::uint64_t bytes = 128 * 1024;
    Params p;  // ServerNet I with the 32-bit 33 MHz PCI bus
    {
        Network net(make_chain(0), p);
        Sink sink;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        CHECK(mbps(net, bytes) == Approx(33.0).epsilon(0.02));
    }
    {
        Network net(make_chain(0), p);
        Sink sink;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.start_transfer(1, 0, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        CHECK(mbps(net, 2 * bytes) / 2 == Approx(19.0).epsilon(0.02));
    }
}

TEST_CASE("outstanding-request-limited bandwidth is 4*64/RTT", "[validation]") {
    struct Case {
        int hops;
        double delay_ns;
        int limit;
    };
    for (const Case c : {Case{8, 10, 4}, Case{12, 10, 4}, Case{1, 2000, 4}, Case{4, 1500, 8},
                         Case{3, 300, 2}}) {
        INFO("hops " << c.hops << " delay " << c.delay_ns << " ns, limit " << c.limit);
        Params p = ideal_endpoints();
        p.link_delay_ns = c.delay_ns;
        p.outstanding_limit = c.limit;
        Network net(make_chain(c.hops), p);
        Sink sink;
        const std::uint64_t bytes = 64 * 1024;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        REQUIRE(sink.done == 1);
        // Zero-load round trip: request and response each cross hops+1 links and `hops`
        // routers; the request's 80 bytes and the response's 16 serialize once each.
        const double ser_ns = 20.0;  // 50 MB/s
        const double rtt_ns = 2 * (c.hops + 1) * c.delay_ns + 2 * c.hops * 300.0 +
                              (64 + 16) * ser_ns + 16 * ser_ns;
        const double or_limit = c.limit * 64 / (rtt_ns * 1e-3);  // bytes per us = MB/s
        REQUIRE(or_limit < 40.0);  // the case really is OR-limited
        CHECK(net.stats().packet_rtt.mean() / kNs == Approx(rtt_ns).epsilon(0.02));
        CHECK(mbps(net, bytes) == Approx(or_limit).epsilon(0.02));
        CHECK(net.stats().packet_rtt.min() == from_ns(rtt_ns));
    }
}

TEST_CASE("with the PCI bus, request-limited bandwidth is 4*64/RTT with the BTE's PCI read in it",
          "[validation]") {
    // The BTE takes an outstanding-request slot, reads the payload over PCI (first-byte latency
    // plus 64 bytes at 132 MB/s), then sends; the slot is held until the response, which the
    // target's AVT sends after its PCI write. The packet RTT starts after the read, so limit *
    // 64 / packet RTT overstates what the slots allow.
    for (const int hops : {4, 8, 12}) {
        INFO("hops " << hops);
        Params p;  // ServerNet I with the PCI bus
        Network net(make_chain(hops), p);
        Sink sink;
        const std::uint64_t bytes = 64 * 1024;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.run(kMs * 1000);
        REQUIRE(sink.done == 1);
        const double ser_ns = 20.0;
        const double pci_data_ns = 64 * 1e3 / 132.0;  // 485 ns
        const double wire_ns = 2 * (hops + 1) * 10.0 + 2 * hops * 300.0 + (64 + 16 + 16) * ser_ns;
        const double packet_rtt_ns = wire_ns + 940 + pci_data_ns;  // + the target's PCI write
        const double request_rtt_ns = packet_rtt_ns + 1450 + pci_data_ns;  // + the BTE's read
        const double limit = 4 * 64 / (request_rtt_ns * 1e-3);
        REQUIRE(limit < 33.0);  // request-limited, not PCI-limited
        // Exact but for each PCI transaction's rounding to a picosecond.
        CHECK(std::llabs(net.stats().request_rtt.min() - from_ns(request_rtt_ns)) <= 2);
        CHECK(std::llabs(net.stats().packet_rtt.min() - from_ns(packet_rtt_ns)) <= 2);
        CHECK(net.stats().request_rtt.mean() / kNs == Approx(request_rtt_ns).epsilon(0.02));
        CHECK(mbps(net, bytes) == Approx(limit).epsilon(0.02));
        // The packet RTT alone predicts more than the slots allow (12 hops: 23.7 vs 20.1 MB/s).
        CHECK(4 * 64 / (packet_rtt_ns * 1e-3) > 1.1 * mbps(net, bytes));
    }
}
