// Measures sequential write then read bandwidth of a directory's disk with the sort's own
// request size and depth (direct I/O where possible), and caches the figures per device.
#include "sortapp/disk_probe.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sortapp/io_ring.hpp"
#include "viaduct/clock.hpp"
#include "viaduct/env.hpp"
#include "viaduct/path.hpp"

namespace sortapp {

namespace {

using viaduct::now_seconds;

bool read_cache(const std::string &path, std::uint64_t dev, DiskBandwidth &out) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::uint64_t d;
        double r, w;
        if (f >> d >> r >> w && d == dev && r > 0 && w > 0) {
            out.read_mb_s = r;
            out.write_mb_s = w;
            out.cached = true;
        }
    }
    return out.cached;
}

void write_cache(const std::string &path, std::uint64_t dev, const DiskBandwidth &bw) {
    if (const std::string dir = viaduct::path_dir(path); dir != "." && dir != "/") {
        for (std::size_t p = 1; p <= dir.size(); ++p) {
            if (p == dir.size() || dir[p] == '/') ::mkdir(dir.substr(0, p).c_str(), 0755);
        }
    }
    std::ofstream out(path, std::ios::app);
    out << dev << " " << bw.read_mb_s << " " << bw.write_mb_s << "\n";
}

// Writes or reads `bytes` of file in `io`-sized requests, a sliding window of `depth` of them
// in flight, each request's slot of `buffer` reused as it completes.
Status sweep(Request::Kind kind, const File &file, const Buffer &buffer, std::size_t io,
             std::uint64_t bytes, unsigned depth) {
    IoRing ring;
    Status status = ring.init(depth);
    std::vector<Request> requests(depth);
    for (std::uint64_t off = 0, k = 0; off < bytes && status; off += io, ++k) {
        Request &r = requests[k % requests.size()];
        if (r.pending) status = ring.wait_for(r);
        if (status) status = request_status(r);
        r.kind = kind;
        r.file = &file;
        r.buffer = buffer.data() + (k % requests.size()) * io;
        r.length = io;
        r.required = kind == Request::Kind::read ? io : 0;
        r.offset = off;
        if (status) status = ring.post(r);
    }
    for (Request &r : requests) {
        Status s = ring.wait_for(r);
        if (status) status = s;
        if (status) status = request_status(r);
    }
    return status;
}

}  // namespace

std::string default_disk_cache_path() {
    const std::string base =
        viaduct::env::text("XDG_CACHE_HOME", viaduct::env::text("HOME", "/tmp") + "/.cache");
    return base + "/viaduct/sortapp-disk";
}

Status probe_disk(const DiskProbeOptions &o, DiskBandwidth &out) {
    out = DiskBandwidth();
    struct stat st {};
    if (::stat(o.dir.c_str(), &st) != 0) return Status::from_errno("cannot stat " + o.dir, errno);
    if (!o.remeasure && !o.cache_path.empty() && read_cache(o.cache_path, st.st_dev, out)) {
        return Status::ok();
    }
    const std::size_t io =
        std::max<std::size_t>(io_alignment, o.io_size / io_alignment * io_alignment);
    const std::uint64_t bytes = std::max<std::uint64_t>(io, o.bytes / io * io);
    std::string path = o.dir + "/.sortapp-disk-probe-" + std::to_string(::getpid());
    Buffer buffer(io * o.io_depth);
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = std::uint8_t(i * 131 + 7);
    Status status;
    {
        File file;
        SORTAPP_TRY(File::create(path, true, true, file));
        double t0 = now_seconds();
        status = sweep(Request::Kind::write, file, buffer, io, bytes, o.io_depth);
        if (status && ::fdatasync(file.fd()) != 0)
            status = Status::from_errno("fdatasync " + path, errno);
        out.write_mb_s = bytes / (now_seconds() - t0) / 1e6;
        // Without O_DIRECT the read would come from the page cache: drop it first.
        if (!file.direct()) ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED);
    }
    if (status) {
        // Read back with the same sliding window of requests as the writes.
        File file;
        status = File::open_read(path, true, file);
        if (status && !file.direct()) ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED);
        double t0 = now_seconds();
        if (status) status = sweep(Request::Kind::read, file, buffer, io, bytes, o.io_depth);
        out.read_mb_s = bytes / (now_seconds() - t0) / 1e6;
    }
    ::unlink(path.c_str());
    if (status && !o.cache_path.empty()) write_cache(o.cache_path, st.st_dev, out);
    return status;
}

}  // namespace sortapp
