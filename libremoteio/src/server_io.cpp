// Remote I/O served by the shadow thread: stat, and reads and writes of an
// export's byte range, checked against the export and the limits, answered
// from the page cache when a read's bytes are all there, else through the
// asynchronous file I/O (file_io.cpp) within io_depth and io_memory.
#include "server.hpp"

namespace remoteio {

void Server::serve_stat(rio_incoming *in) {
    std::shared_ptr<Export> e = exports_.find(in->hdr.handle);
    if (!e) {
        send_reply(in, RIO_ERR_BAD_HANDLE, nullptr, 0);
        return;
    }
    ++stats_.requests_served;
    uint64_t reply[2] = {e->length, e->writable ? uint64_t{RIO_EXPORT_READ_WRITE} : 0};
    send_reply(in, RIO_OK, reply, sizeof reply);
}

// RIO_OK if the read or write may go ahead on its export, else why not.
int Server::check_io(rio_incoming *in) const {
    const RequestHeader &h = in->hdr;
    const bool write = h.command == kCmdWrite;
    if (!in->exp) return RIO_ERR_BAD_HANDLE;
    if (h.offset > in->exp->length || h.length > in->exp->length - h.offset) return RIO_ERR_RANGE;
    if (write && !in->exp->writable) return RIO_ERR_READ_ONLY;
    if (h.length > opts_.max_transfer) return RIO_ERR_TOO_LARGE;
    if (write ? h.length != in->data.size() : h.length > h.reply_capacity)
        return RIO_ERR_BAD_REQUEST;
    return RIO_OK;
}

void Server::serve_io(rio_incoming *in) {
    in->exp = exports_.find(in->hdr.handle);
    int refuse = check_io(in);
    if (refuse != RIO_OK) {
        send_reply(in, refuse, nullptr, 0);
        return;
    }
    if (in->hdr.length == 0) {
        ++stats_.requests_served;
        send_reply(in, RIO_OK, nullptr, 0);
        return;
    }
    if (in->hdr.command == kCmdRead && send_resident(in)) return;
    io_waiting_.push_back(in);
    start_waiting_io();
}

// A read already in the page cache is sent from there, the export (held by
// the request) keeping the mapping alive until the send is done. A transport
// that cannot register the mapping (verbs on a read-only file mapping) leaves
// it to file I/O. False: the read is still to be served.
bool Server::send_resident(rio_incoming *in) {
    // The request may be released as soon as its sends are issued: keep what
    // is needed afterwards.
    const uint64_t length = in->hdr.length;
    const char *data =
        mapped_sends_ ? in->exp->resident(in->hdr.offset, static_cast<size_t>(length)) : nullptr;
    if (data == nullptr) return false;
    int rc = send_reply(in, RIO_OK, data, static_cast<size_t>(length), false, true);
    if (rc == MSG_OK) {
        ++stats_.requests_served;
        stats_.bytes_read += length;
        return true;
    }
    // The transport cannot send from a file mapping: stop trying.
    if (rc == MSG_ERR_TRANSPORT) mapped_sends_ = false;
    return false;
}

// Starts queued transfers while the depth and the memory budget allow (one
// transfer always may, however large, so nothing starves).
void Server::start_waiting_io() {
    while (!io_waiting_.empty() && io_in_flight_ < opts_.io_depth) {
        rio_incoming *in = io_waiting_.front();
        size_t need = in->hdr.command == kCmdRead ? in->hdr.length : 0;
        if (io_in_flight_ > 0 && io_bytes_in_flight_ + need > opts_.io_memory) break;
        io_waiting_.pop_front();
        ++io_in_flight_;
        io_bytes_in_flight_ += need;
        if (need > 0) {
            try {
                in->io_buf.resize(need);
            } catch (const std::bad_alloc &) {
                --io_in_flight_;
                io_bytes_in_flight_ -= need;
                send_reply(in, MSG_ERR_NO_MEMORY, nullptr, 0);
                continue;
            }
        }
        submit_io(in);
    }
}

void Server::submit_io(rio_incoming *in) {
    const bool write = in->hdr.command == kCmdWrite;
    IoRequest &io = in->io;
    io.part = {PartKind::FileIo, in};
    io.fd = in->exp->fd;
    io.write = write;
    io.offset = in->exp->base + in->hdr.offset + in->io_done;
    io.buf = (write ? in->data.data() : in->io_buf.data()) + in->io_done;
    io.len = in->hdr.length - in->io_done;
    if (io.len > (size_t{1} << 30)) io.len = size_t{1} << 30;  // one transfer's limit
    file_io_->submit(&io);
}

void Server::on_io_done(rio_incoming *in) {
    const bool write = in->hdr.command == kCmdWrite;
    const ssize_t res = in->io.result;
    // A read that hits the end of the file before the end of the export is
    // as much an error as EIO: the requester must not take it as data.
    if (res > 0) {
        in->io_done += static_cast<size_t>(res);
        if (in->io_done < in->hdr.length) {
            submit_io(in);
            return;
        }
    }
    --io_in_flight_;
    io_bytes_in_flight_ -= write ? 0 : in->hdr.length;
    if (res <= 0) {
        send_reply(in, RIO_ERR_IO, nullptr, 0);
    } else {
        ++stats_.requests_served;
        if (write) {
            stats_.bytes_written += in->io_done;
            send_reply(in, RIO_OK, nullptr, 0);
        } else {
            stats_.bytes_read += in->io_done;
            send_reply(in, RIO_OK, in->io_buf.data(), in->io_done);
        }
    }
    start_waiting_io();
}

}  // namespace remoteio
