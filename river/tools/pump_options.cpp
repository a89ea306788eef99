// The DataPump's command line.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pump.hpp"

namespace pump {

namespace {

const char kUsage[] =
    "usage: datapump --from RANK:INPUT --to RANK:OUTPUT [OPTIONS]\n"
    "       datapump --no-disk [--bytes SIZE] [--from RANK --to RANK] [OPTIONS]\n"
    "\n"
    "Copies INPUT on one rank's disk to OUTPUT on another's through a river, with\n"
    "deep asynchronous reads at the source and writes at the sink, and prints the\n"
    "rate (MB/s, 10^6 bytes) and the CPU time per byte at both ends. Run it under\n"
    "msgrun (or any libmsg launcher) on as many ranks as the two ranks need, e.g.\n"
    "\n"
    "  msgrun -n 2 datapump --from 0:/data/in --to 1:/scratch/out\n"
    "\n"
    "The output is written under a temporary name in its directory and renamed\n"
    "into place only when complete; a failed or stopped copy leaves no output. An\n"
    "existing OUTPUT is replaced, unless it is the input itself. The source and\n"
    "the sink are different ranks (two on one host copy from disk to disk there).\n"
    "The sink's rank prints the report.\n"
    "\n"
    "options:\n"
    "  --from RANK:INPUT  the source's rank and file (default rank 0)\n"
    "  --to RANK:OUTPUT   the sink's rank and file (default rank 1)\n"
    "  --no-disk          no files: the source sends --bytes from memory and the sink\n"
    "                     drops them (the river and fabric alone)\n"
    "  --bytes SIZE       bytes to send with --no-disk (default 1G)\n"
    "  --block SIZE       bytes per disk read or write request (default 1M)\n"
    "  --depth N          disk reads in flight at the source (default 8)\n"
    "  --batch SIZE       river batch size (default 1M)\n"
    "  --credits N        batches in flight from source to sink; also the sink's\n"
    "                     writes in flight (default 8)\n"
    "  --no-direct        go through the page cache (default: O_DIRECT where the file\n"
    "                     system takes it)\n"
    "  --io KIND          uring or threads (default: io_uring, else pread/pwrite\n"
    "                     threads)\n"
    "  --json             one JSON object on standard output instead of text\n"
    "  --help, --version\n"
    "SIZE takes a K, M or G suffix (powers of 1024).\n";

bool parse_size(const char *text, uint64_t *out) {
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (end == text || errno != 0 || text[0] == '-') return false;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    if (*end == 'M' || *end == 'm') shift = 20;
    if (*end == 'G' || *end == 'g') shift = 30;
    if (shift != 0) ++end;
    if (*end != '\0' || (shift != 0 && v > (~0ull >> shift))) return false;
    *out = v << shift;
    return true;
}

bool parse_int(const char *text, int lo, int hi, int *out) {
    uint64_t v;
    if (!parse_size(text, &v) || v < static_cast<uint64_t>(lo) || v > static_cast<uint64_t>(hi))
        return false;
    *out = static_cast<int>(v);
    return true;
}

// "RANK:PATH" (or "RANK" with --no-disk).
bool parse_end(const char *text, int *rank, std::string *path) {
    const char *colon = std::strchr(text, ':');
    const std::string number = colon ? std::string(text, colon) : std::string(text);
    if (!parse_int(number.c_str(), 0, 1 << 20, rank)) return false;
    *path = colon ? std::string(colon + 1) : std::string();
    return true;
}

struct Parser {
    int argc;
    char **argv;
    int i = 1;
    std::string error;
    const char *value() {
        if (i + 1 >= argc) {
            error = std::string(argv[i]) + " needs a value";
            return nullptr;
        }
        return argv[++i];
    }
};

bool takes_value(const std::string &arg) {
    for (const char *name :
         {"--from", "--to", "--bytes", "--block", "--depth", "--batch", "--credits", "--io"})
        if (arg == name) return true;
    return false;
}

// An option with its value.
bool parse_valued(const std::string &arg, const char *v, Options *o) {
    uint64_t size = 0;
    if (arg == "--from") return parse_end(v, &o->from, &o->input);
    if (arg == "--to") return parse_end(v, &o->to, &o->output);
    if (arg == "--bytes") return parse_size(v, &o->bytes);
    if (arg == "--block" || arg == "--batch") {
        if (!parse_size(v, &size) || size < 1 || size > (uint64_t{1} << 30)) return false;
        (arg == "--block" ? o->block : o->batch) = static_cast<size_t>(size);
        return true;
    }
    if (arg == "--depth" || arg == "--credits")
        return parse_int(v, 1, 1024, arg == "--depth" ? &o->depth : &o->credits);
    o->io = v;  // --io
    return o->io == "uring" || o->io == "threads";
}

bool parse_one(Parser &p, Options *o) {
    const std::string arg = p.argv[p.i];
    if (arg == "--no-disk") {
        o->no_disk = true;
    } else if (arg == "--no-direct") {
        o->direct = false;
    } else if (arg == "--json") {
        o->json = true;
    } else if (takes_value(arg)) {
        const char *v = p.value();
        if (v == nullptr) return false;
        if (!parse_valued(arg, v, o)) {
            p.error = "bad value '" + std::string(v) + "' for " + arg;
            return false;
        }
    } else {
        p.error = (arg.rfind("-", 0) == 0 ? "unknown option " : "unexpected argument ") + arg;
        return false;
    }
    return true;
}

std::string check(const Options &o) {
    if (o.from == o.to) return "the source and the sink must be different ranks";
    if (o.no_disk) {
        if (!o.input.empty() || !o.output.empty()) return "--no-disk takes ranks, not files";
        return "";
    }
    if (o.input.empty() || o.output.empty())
        return "--from RANK:INPUT and --to RANK:OUTPUT are needed (or --no-disk)";
    return "";
}

}  // namespace

int parse_options(int argc, char **argv, bool speak, Options *o) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            if (speak) std::fputs(kUsage, stdout);
            return 1;
        }
        if (std::strcmp(argv[i], "--version") == 0) {
            if (speak) std::printf("datapump (viaduct) %s\n", VIADUCT_VERSION);
            return 1;
        }
    }
    Parser p{argc, argv, 1, {}};
    for (; p.i < argc; ++p.i)
        if (!parse_one(p, o)) break;
    if (p.error.empty()) p.error = check(*o);
    if (p.error.empty()) return 0;
    if (speak) std::fprintf(stderr, "datapump: %s (datapump --help explains)\n", p.error.c_str());
    return 2;
}

}  // namespace pump
