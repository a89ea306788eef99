// The DataPump's report: MB/s of the whole copy and, at each end, CPU time
// per byte (and cycles per byte at the CPU's nominal clock, the paper's cpb),
// as text or one JSON object.
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "pump.hpp"

namespace pump {

namespace {

// The first "cpu MHz" of /proc/cpuinfo, 0 if unknown.
double cpu_mhz() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("cpu MHz", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) return std::atof(line.c_str() + colon + 1);
        }
    return 0;
}

double per_byte(double seconds, uint64_t bytes) {
    return bytes ? seconds / static_cast<double>(bytes) : 0;
}

const char *protocol_name(int p) {
    return p == MSG_PROTOCOL_SENDRECV ? "sendrecv" : p == MSG_PROTOCOL_RDMA ? "rdma" : "rdma-write";
}

nlohmann::ordered_json end_json(int rank, const std::string &path, const Figures &f, uint64_t bytes,
                                double mhz) {
    const double spb = per_byte(f.cpu_seconds, bytes);
    return {{"rank", rank},
            {"path", path},
            {"seconds", f.seconds},
            {"cpu_seconds", f.cpu_seconds},
            {"cpu_seconds_per_byte", spb},
            {"cycles_per_byte", spb * mhz * 1e6},
            {"io", f.io},
            {"direct", f.direct}};
}

void print_json(const Options &o, const Figures &src, const Figures &snk, const msg_info_t &info,
                double mhz) {
    const uint64_t bytes = snk.bytes;
    nlohmann::ordered_json river = {{"batch_bytes", o.batch},
                                    {"credits", o.credits},
                                    {"batches", snk.river.batches_received},
                                    {"credit_waits", src.river.credit_waits},
                                    {"blocked_seconds", src.river.blocked_ns / 1e9},
                                    {"peak_source_bytes", src.river.peak_source_bytes},
                                    {"peak_sink_batches", snk.river.peak_sink_batches}};
    nlohmann::ordered_json doc = {{"tool", "datapump"},
                                  {"version", VIADUCT_VERSION},
                                  {"mode", o.no_disk ? "no-disk" : "disk"},
                                  {"bytes", bytes},
                                  {"seconds", snk.seconds},
                                  {"mb_per_s", snk.seconds > 0 ? bytes / snk.seconds / 1e6 : 0.0},
                                  {"cpu_mhz", mhz},
                                  {"source", end_json(o.from, o.input, src, bytes, mhz)},
                                  {"sink", end_json(o.to, o.output, snk, bytes, mhz)},
                                  {"river", river},
                                  {"block", o.block},
                                  {"depth", o.depth},
                                  {"provider", info.provider},
                                  {"protocol", protocol_name(info.long_protocol)},
                                  {"restricted", info.restricted}};
    std::printf("%s\n",
                doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

// printf into `out`.
__attribute__((format(printf, 2, 3))) void appendf(std::string &out, const char *format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    out += line;
}

void end_text(std::string &out, const char *name, int rank, const Figures &f, uint64_t bytes,
              double mhz) {
    const double spb = per_byte(f.cpu_seconds, bytes);
    appendf(out, "  %-6s rank %d: %.3f s CPU = %.3f ns/B", name, rank, f.cpu_seconds, spb * 1e9);
    if (mhz > 0) appendf(out, " (%.2f cycles/B at %.0f MHz)", spb * mhz * 1e6, mhz);
    appendf(out, "; %s%s\n", f.io, f.direct ? ", O_DIRECT" : "");
}

std::string text_of(const Options &o, const Figures &src, const Figures &snk,
                    const msg_info_t &info, double mhz) {
    std::string out;
    const uint64_t bytes = snk.bytes;
    if (o.no_disk)
        appendf(out, "datapump --no-disk: %llu bytes from rank %d to rank %d",
                static_cast<unsigned long long>(bytes), o.from, o.to);
    else
        appendf(out, "datapump: %llu bytes from %d:%s to %d:%s",
                static_cast<unsigned long long>(bytes), o.from, o.input.c_str(), o.to,
                o.output.c_str());
    appendf(out, " in %.3f s = %.1f MB/s\n", snk.seconds,
            snk.seconds > 0 ? bytes / snk.seconds / 1e6 : 0.0);
    end_text(out, "source", o.from, src, bytes, mhz);
    end_text(out, "sink", o.to, snk, bytes, mhz);
    appendf(out,
            "  river: %llu batches of %zu B, %d credits, over %s (%s%s); the source waited "
            "%.3f s for credits (%llu times)\n",
            static_cast<unsigned long long>(snk.river.batches_received), o.batch, o.credits,
            info.provider, protocol_name(info.long_protocol), info.restricted ? ", restricted" : "",
            src.river.blocked_ns / 1e9, static_cast<unsigned long long>(src.river.credit_waits));
    return out;
}

}  // namespace

std::string report_text(const Options &o, const Figures &src, const Figures &snk,
                        const msg_info_t &info) {
    return text_of(o, src, snk, info, cpu_mhz());
}

void print_report(const Options &o, const Figures &src, const Figures &snk,
                  const msg_info_t &info) {
    const double mhz = cpu_mhz();
    if (o.json) return print_json(o, src, snk, info, mhz);
    std::fputs(text_of(o, src, snk, info, mhz).c_str(), stdout);
}

}  // namespace pump
