// The comparison program of scripts/sort-bench.sh: stxxl::sort of a file of fixed-width
// records (100/10 or 80/8), in place, with a given memory budget. The file is the sort's
// storage (an stxxl vector over it), so stxxl reads it, writes runs to its scratch disk, and
// merges them back into the file: the same I/O volume as a two-pass sortapp local. The time
// includes flushing the sorted file to disk, as sortapp's does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <stxxl/io>
#include <stxxl/sort>
#include <stxxl/vector>

#include "viaduct/fatal.hpp"

template <std::size_t R, std::size_t K>
struct Record {
    unsigned char bytes[R];
};

template <std::size_t R, std::size_t K>
struct Compare {
    using value_type = Record<R, K>;
    bool operator()(const value_type &a, const value_type &b) const {
        return std::memcmp(a.bytes, b.bytes, K) < 0;
    }
    value_type min_value() const {
        value_type v;
        std::memset(v.bytes, 0x00, R);
        return v;
    }
    value_type max_value() const {
        value_type v;
        std::memset(v.bytes, 0xff, R);
        return v;
    }
};

template <std::size_t R, std::size_t K>
int sort_file(const char *path, std::size_t memory) {
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size % R != 0) {
        std::fprintf(stderr, "stxxl_sort: %s missing or not a whole number of %zu-byte records\n",
                     path, R);
        return 2;
    }
    // 2 MiB blocks, a multiple of the record size as stxxl needs whole records per block.
    constexpr std::size_t block = (2u << 20) / (R * 4096) * (R * 4096) + (R * 4096);
    using vector_type = typename stxxl::VECTOR_GENERATOR<Record<R, K>, 2, 2, block>::result;
    auto t0 = std::chrono::steady_clock::now();
    {
        stxxl::syscall_file file(path, stxxl::file::RDWR | stxxl::file::DIRECT);
        vector_type v(&file);
        stxxl::sort(v.begin(), v.end(), Compare<R, K>(), memory);
    }
    // stxxl leaves its writes where the device has them; sortapp's output counts as done once
    // it is on disk (fdatasync), and so does this one, or the two would not be compared alike.
    // On a virtual disk whose host caches writes, that flush is a large part of the time.
    const auto sorted = std::chrono::steady_clock::now();
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fdatasync(fd) != 0) {
        std::perror("stxxl_sort: flushing the sorted file");
        return 1;
    }
    ::close(fd);
    const auto done = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(done - t0).count();
    std::printf("stxxl_sort: %lld bytes in %.2f s = %.1f MB/s (sorting %.2f s, flushing %.2f s)\n",
                static_cast<long long>(st.st_size), s, st.st_size / s / 1e6,
                std::chrono::duration<double>(sorted - t0).count(),
                std::chrono::duration<double>(done - sorted).count());
    return 0;
}

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("stxxl-sort");
    if (argc < 5) {
        std::fprintf(stderr,
                     "usage: stxxl_sort FILE MEMORY_MIB RECORD_SIZE KEY_SIZE [SCRATCH_FILE]\n");
        return 2;
    }
    std::size_t memory = std::size_t(std::stoull(argv[2])) << 20;
    if (argc > 5) {
        stxxl::config *cfg = stxxl::config::get_instance();
        stxxl::disk_config disk(argv[5], 0, "syscall unlink autogrow");
        disk.direct = stxxl::disk_config::DIRECT_TRY;
        cfg->add_disk(disk);
    }
    std::string format = std::string(argv[3]) + "/" + argv[4];
    if (format == "100/10") return sort_file<100, 10>(argv[1], memory);
    if (format == "80/8") return sort_file<80, 8>(argv[1], memory);
    std::fprintf(stderr, "stxxl_sort: only 100/10 and 80/8 records\n");
    return 2;
}
