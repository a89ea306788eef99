// Measures a directory's disk the way the sort uses it: the sort's request size and depth,
// direct I/O where possible (else the page cache is dropped before reading), a write sweep,
// a read sweep and a mixed sweep (reading one region while writing another), each bounded in
// time, on a probe file of its own that is always removed.
#include "sortapp/disk_probe.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "sortapp/cleanup.hpp"
#include "sortapp/io_ring.hpp"
#include "viaduct/cache_dir.hpp"
#include "viaduct/clock.hpp"

namespace sortapp {

namespace {

using viaduct::now_seconds;

// One sequential stream of requests over [next, end) of a file.
struct Stream {
    Request::Kind kind;
    const File *file;
    std::uint64_t next, end;
    std::uint64_t posted = 0;
};

void fill(Request &r, Stream &s, std::uint8_t *buffer, std::size_t io) {
    r.kind = s.kind;
    r.file = s.file;
    r.buffer = buffer;
    r.length = io;
    r.required = s.kind == Request::Kind::read ? io : 0;
    r.offset = s.next;
    s.next += io;
    s.posted += io;
}

// Runs the streams at once, `depth` requests in flight for each, each slot of `buffer`
// reused as its request completes, until every stream is done or the deadline passes.
Status sweep(std::vector<Stream> &streams, const Buffer &buffer, std::size_t io, unsigned depth,
             double deadline) {
    IoRing ring;
    std::vector<Request> requests(depth * streams.size());
    Status status = ring.init(unsigned(requests.size()));
    std::size_t idle = 0;  // slots in a row that had nothing more to do
    for (std::size_t k = 0; status && idle < requests.size(); ++k) {
        const std::size_t slot = k % requests.size();
        Request &r = requests[slot];
        Stream &s = streams[slot % streams.size()];
        if (r.pending) status = ring.wait_for(r);
        if (status && r.file != nullptr) status = request_status(r);
        if (!status || s.next >= s.end || now_seconds() >= deadline) {
            ++idle;
            continue;
        }
        idle = 0;
        fill(r, s, buffer.data() + slot * io, io);
        status = ring.post(r);
    }
    for (Request &r : requests) {
        Status s = r.pending ? ring.wait_for(r) : Status::ok();
        if (s && r.file != nullptr) s = request_status(r);
        if (status) status = s;
    }
    return status;
}

std::string utc_date(double t) {
    std::time_t s = std::time_t(t);
    std::tm tm{};
    ::gmtime_r(&s, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// The calendar time (the project's clock is monotonic: right for durations, not for dates).
double epoch_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double load_average() {
    double load[1];
    return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

// Written data must be on the disk, and not in the page cache where a read would find it.
Status settle(const File &file, const std::string &path) {
    if (::fdatasync(file.fd()) != 0) return Status::from_errno("fdatasync " + path, errno);
    if (!file.direct()) ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED);
    return Status::ok();
}

double mb_s(std::uint64_t bytes, double seconds) {
    return seconds > 0 ? double(bytes) / seconds / 1e6 : 0;
}

// The three sweeps on an open probe file; fills the rates and the bytes written.
Status three_sweeps(const DiskProbeOptions &o, const File &file, const std::string &path,
                    std::size_t io, std::uint64_t bytes, DiskBandwidth &out) {
    Buffer buffer(io * o.io_depth * 2);
    if (!buffer.valid()) return Status::error("no memory for the disk probe's buffers");
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = std::uint8_t(i * 131 + 7);

    std::vector<Stream> w{{Request::Kind::write, &file, 0, bytes}};
    double t0 = now_seconds();
    SORTAPP_TRY(sweep(w, buffer, io, o.io_depth, t0 + o.max_seconds));
    SORTAPP_TRY(settle(file, path));
    out.write_mb_s = mb_s(w[0].posted, now_seconds() - t0);
    const std::uint64_t written = w[0].posted;
    out.conditions.file_bytes = written;

    // The write side is write-only: reads go through a descriptor of their own.
    File in;
    SORTAPP_TRY(File::open_read(path, true, in));
    if (!in.direct()) ::posix_fadvise(in.fd(), 0, 0, POSIX_FADV_DONTNEED);
    std::vector<Stream> r{{Request::Kind::read, &in, 0, written}};
    t0 = now_seconds();
    SORTAPP_TRY(sweep(r, buffer, io, o.io_depth, t0 + o.max_seconds));
    out.read_mb_s = mb_s(r[0].posted, now_seconds() - t0);

    // The merge's pattern: one stream in while another goes out, each as deep as the sort's.
    std::vector<Stream> m{{Request::Kind::read, &in, 0, written},
                          {Request::Kind::write, &file, written, 2 * written}};
    if (!in.direct()) ::posix_fadvise(in.fd(), 0, 0, POSIX_FADV_DONTNEED);
    t0 = now_seconds();
    SORTAPP_TRY(sweep(m, buffer, io, o.io_depth, t0 + o.max_seconds));
    SORTAPP_TRY(settle(file, path));
    out.mixed_mb_s = mb_s(m[0].posted + m[1].posted, now_seconds() - t0);
    if (out.read_mb_s <= 0 || out.write_mb_s <= 0 || out.mixed_mb_s <= 0)
        return Status::error("the disk probe moved no data in " + path);
    return Status::ok();
}

}  // namespace

Status measure_disk(const DiskProbeOptions &o, DiskBandwidth &out) {
    out = DiskBandwidth();
    out.source = o;
    struct stat st {};
    if (::stat(o.dir.c_str(), &st) != 0) return Status::from_errno("cannot stat " + o.dir, errno);
    if (!S_ISDIR(st.st_mode)) return Status::error(o.dir + " is not a directory");
    if (o.io_depth == 0 || !(o.max_seconds > 0))
        return Status::error("the disk probe needs a depth and a time limit");
    const std::size_t io =
        std::max<std::size_t>(io_alignment, o.io_size / io_alignment * io_alignment);
    const std::uint64_t bytes = std::max<std::uint64_t>(io, o.bytes / io * io);
    DiskConditions &c = out.conditions;
    c.load_average = load_average();
    c.measured_at = epoch_seconds();
    c.date = utc_date(c.measured_at);
    const double start = now_seconds();
    c.io_size = io;
    c.io_depth = o.io_depth;
    c.device = std::to_string(std::uint64_t(st.st_dev));

    std::string path;
    SORTAPP_TRY(cleanup::create([&](std::string &p) {
        std::string templ = o.dir + "/.sortapp-disk-probe.XXXXXX";
        std::vector<char> name(templ.begin(), templ.end());
        name.push_back('\0');
        int fd = ::mkstemp(name.data());
        if (fd < 0) return Status::from_errno("cannot create a probe file in " + o.dir, errno);
        ::close(fd);
        p = path = name.data();
        return Status::ok();
    }));
    Status status;
    {
        File file;
        status = File::create(path, true, true, file);
        c.direct = status && file.direct();
        if (status) status = three_sweeps(o, file, path, io, bytes, out);
    }
    cleanup::remove(path);
    c.seconds = now_seconds() - start;
    return status;
}

std::string default_disk_cache_path() {
    const std::string dir = viaduct::user_cache_dir();
    return dir.empty() ? "" : dir + "/sortapp-disk.json";  // "": measured at every run
}

}  // namespace sortapp
