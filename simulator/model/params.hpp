// Hardware parameters of the model. Defaults are ServerNet I as described in the
// terabyte-sort paper (§5.2.1); docs/sansim.md derives the PCI figures.
#pragma once
#include <cstdint>
#include <string>

namespace sansim {

enum class Arbitration { round_robin, oldest_first };
enum class FabricChoice { shortest, balance, x_only, y_only };
// Where write responses (the acknowledgements) travel: on the fabric like any packet, on an
// ideal separate path that takes the zero-load time and meets no contention, or nowhere (a
// write is done when its data arrives and holds no outstanding-request slot). Read responses
// carry the data and always travel on the fabric.
enum class AckPath { inband, separate, none };
// Link-level flow control. packet (ServerNet): a packet starts on a link only when the next
// input buffer has room for all of it, which the sender sees at once. credit (InfiniBand): the
// sender holds credits for the receiver's buffer on each virtual lane, in credit_bytes units,
// spends them as a packet starts and gets them back a link delay after the packet's tail has
// left that buffer.
enum class FlowControl { packet, credit };
// How far ahead the event loop fetches what events will touch: automatic chooses deep once
// the links outgrow the caches. Results are the same either way; only speed differs.
enum class Prefetch { automatic, light, deep };

struct Params {
    // Links and routers.
    double symbol_mhz = 50.0;       // router symbol clock; one symbol is one byte
    double link_mbps = 50.0;        // per direction; 0 means symbol_mhz x 1 byte
    double link_delay_ns = 10.0;    // propagation per link (cable + serdes)
    double hop_latency_ns = 300.0;  // pipelined router latency, head in to head out
    int fifo_bytes = 256;           // input FIFO per router port
    Arbitration arbitration = Arbitration::round_robin;
    // Virtual lanes: each router input has one buffer per lane, and a packet blocked on one
    // lane does not hold up the others. The topology's lane rule says which lane a packet takes.
    FlowControl flow_control = FlowControl::packet;
    int vls = 1;
    int vl_buffer_bytes = 0;       // per lane and input; 0: fifo_bytes
    int credit_bytes = 64;         // credit unit (InfiniBand's 64 bytes); credit flow control only
    std::uint64_t route_seed = 1;  // Valiant routing's choice of intermediate groups

    // Packets.
    int max_payload = 64;
    int header_bytes = 16;  // header + CRC

    // NICs.
    int outstanding_limit = 4;       // SPAD configures 4; hardware max 8
    int bte_engines = 1;             // transfers a NIC issues concurrently (ServerNet I: 1)
    double nic_turnaround_ns = 0.0;  // AVT processing before a response is queued
    AckPath acks = AckPath::inband;

    // PCI (32-bit, 33 MHz). bandwidth 0 disables the bus model (ideal endpoints).
    double pci_mbps = 132.0;
    double pci_read_latency_ns = 1450.0;   // first-byte latency of a read, bus held
    double pci_write_overhead_ns = 940.0;  // per write transaction, bus held
    double disk_mbps = 0.0;                // background disk DMA per node, each of read and write
    int disk_burst_bytes = 4096;           // one disk DMA burst on the bus

    // Fabrics.
    FabricChoice fabric_choice = FabricChoice::shortest;

    // The event loop.
    Prefetch prefetch = Prefetch::automatic;

    // Statistics.
    double series_bin_us = 100.0;  // time-series bin for outstanding-request exhaustion
    // A run with work pending and no packet reaching any NIC for this long has stalled and is
    // stopped (0: never). Never less than 100 times the slowest packet's hop.
    double stall_us = 1000.0;
    // Throughput or mean latency differing by more than this fraction between the halves of
    // the measurement window: the run did not reach a steady state.
    double steady_tolerance = 0.1;
};

const char *arbitration_name(Arbitration a);
const char *fabric_choice_name(FabricChoice f);
const char *ack_path_name(AckPath a);
const char *flow_control_name(FlowControl f);

}  // namespace sansim
