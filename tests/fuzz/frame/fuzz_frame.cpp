// Fuzz target: the coordinator's frame reader (FrameReader::fill/next over a socket)
// and get_u32 over every body it cuts, as a rank or the coordinator reads them.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bootstrap/frame.hpp"

using msg::boot::Frame;
using msg::boot::FrameReader;

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_frame: %s\n", what);
    std::abort();
}

// Checks a frame against the bytes that were sent and walks its body as u32s.
void check_frame(const Frame &f, const uint8_t *sent, size_t sent_len, size_t &consumed) {
    const size_t frame_len = 4 + 1 + f.body.size();
    if (consumed + frame_len > sent_len) broken("a frame longer than what was sent");
    uint32_t len = 0;
    std::memcpy(&len, sent + consumed, 4);
    if (len != f.body.size() + 1) broken("a frame whose length is not its prefix");
    if (len > msg::boot::kMaxFrame) broken("a frame over the size limit");
    if (static_cast<uint8_t>(f.type) != sent[consumed + 4]) broken("a frame of the wrong type");
    if (!f.body.empty() && std::memcmp(f.body.data(), sent + consumed + 5, f.body.size()) != 0)
        broken("a frame body that differs from what was sent");
    consumed += frame_len;
    size_t pos = 0;
    uint32_t v = 0;
    while (msg::boot::get_u32(f.body, pos, v))
        if (pos > f.body.size()) broken("get_u32 read past the body");
    if (f.body.size() - pos >= 4) broken("get_u32 stopped with a whole u32 left");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    // The first byte chooses how the stream is split into writes, so frames
    // also arrive cut at every place a socket may cut them.
    const size_t piece = 1 + data[0] % 64;
    const uint8_t *stream = data + 1;
    const size_t len = size - 1;

    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) broken("socketpair");
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    FrameReader reader;
    Frame frame;
    size_t consumed = 0;
    bool open = true;
    for (size_t at = 0; at < len && open; at += piece) {
        const size_t n = len - at < piece ? len - at : piece;
        if (::write(fds[1], stream + at, n) != static_cast<ssize_t>(n)) broken("write");
        open = reader.fill(fds[0]);
        while (open && reader.next(frame)) check_frame(frame, stream, len, consumed);
    }
    ::close(fds[1]);
    while (open) {
        open = reader.fill(fds[0]);
        while (open && reader.next(frame)) check_frame(frame, stream, len, consumed);
    }
    ::close(fds[0]);
    return 0;
}
