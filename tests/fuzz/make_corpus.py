#!/usr/bin/env python3
# Writes the fuzz targets' seed corpora (tests/fuzz/<target>/corpus/): a few small,
# valid inputs each, in the layouts the targets read. Run again after a wire change.
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    path = os.path.join(HERE, target, "corpus", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# Coordinator frames: u32 length (type byte + body), type, body. Input byte 0: write size.
def frame(ftype, body=b""):
    return struct.pack("<IB", len(body) + 1, ftype) + body


u32 = lambda *v: struct.pack("<%dI" % len(v), *v)
write("frame", "hello", b"\x07" + frame(1, u32(2, 4)))
write("frame", "gather", b"\x00" + frame(2, u32(1) + b"fabric-address") + frame(4, u32(1)))
write("frame", "gather_result",
      b"\x03" + frame(3, u32(1, 2) + b"\x01" + u32(3) + b"abc" + b"\x00" + u32(0)) + frame(5, u32(1)))
write("frame", "failed_error", b"\x3f" + frame(7, u32(3)) + frame(8, b"rank 3 left") + frame(6))


# libmsg packets: WireHeader (64 bytes) and payload. Input bytes 0, 1: job size, own rank.
def header(ptype, src=1, credits=0, tag=0, flags=0, length=0, send_id=0, recv_id=0, offset=0, key=0):
    return struct.pack("<HBBIIiII5Q", 0x5644, 1, ptype, src, credits, tag, flags, 0, length,
                       send_id, recv_id, offset, key)


write("packet", "eager", b"\x04\x00" + header(2, length=5) + b"hello")
write("packet", "rts_rdma", b"\x04\x00" + header(3, flags=1, length=1 << 20, send_id=7, offset=4096, key=9))
write("packet", "cts_write", b"\x02\x00" + header(4, flags=2, length=4096, send_id=7, recv_id=3, key=9))
write("packet", "chunk", b"\x04\x02" + header(5, src=3, length=8, recv_id=3, offset=0) + b"12345678")
write("packet", "credit", b"\x08\x05" + header(8, src=6, credits=4))

# The engine's script: byte 0 configures (protocol, restricted, RDMA read/write support),
# then ops: 0 irecv(src, tag, u16 capacity), 1 isend(dest, tag, u16 len),
# 2 packet(shape, type, src, credits, tag, flags, u16 len, send_id, recv_id, offset, key),
# 3 progress. Request ids count from 1.
u16 = lambda v: struct.pack("<H", v)


def irecv(src, tag, cap):
    return bytes([0, src + 1, tag + 1]) + u16(cap)


def isend(dest, tag, n):
    return bytes([1, dest - 1, tag]) + u16(n)


def packet(ptype, src=1, credits=0, tag=0, flags=0, length=0, send_id=0, recv_id=0, offset8=0, key=0):
    return bytes([2, 0, ptype, src, credits, tag, flags]) + u16(length) + bytes(
        [send_id, recv_id, offset8, key])


PROGRESS = b"\x03"
write("engine", "eager", b"\x00" + irecv(1, 0, 100) + packet(2, length=100) + PROGRESS)
write("engine", "long_sendrecv",
      b"\x00" + irecv(1, 0, 1000) + packet(3, length=1000, send_id=5) + PROGRESS +
      packet(5, length=512, recv_id=1, offset8=0) + packet(5, length=488, recv_id=1, offset8=1) +
      PROGRESS + PROGRESS)
write("engine", "long_read", bytes([1 | 8]) + irecv(-1, -1, 1500) +
      packet(3, flags=1, length=1500, send_id=4) + PROGRESS + PROGRESS + PROGRESS)
write("engine", "long_write", bytes([2 | 16]) + irecv(2, 1, 900) +
      packet(3, src=2, tag=1, flags=2, length=900, send_id=6) + PROGRESS +
      packet(7, src=2, flags=2, length=900, send_id=6, recv_id=1) + PROGRESS)
write("engine", "long_send", b"\x04" + isend(1, 0, 1000) + PROGRESS +
      packet(4, length=1000, send_id=1, recv_id=9) + PROGRESS + PROGRESS + PROGRESS)

# libremoteio: byte 0 the inline limit / 32, byte 1 bit 0: a reply rather than a request.
def request(flags=0, command=0xFFFF0001, tag_base=0x40000010, data=b"", **kw):
    return struct.pack("<IHBBII6Q", 0x52494F51, 1, kw.get("target", 0), flags, command, tag_base,
                       len(data), kw.get("reply_capacity", 4096), kw.get("handle", 1),
                       kw.get("offset", 0), kw.get("length", 4096), 0) + data


def reply(status=0, data_len=0, sent=b"", inline=1):
    return struct.pack("<IHBBiIQQ", 0x52494F52, 1, inline, 0, status, 0, data_len, len(sent)) + sent


write("rio_request", "read", b"\x10\x00" + request())
write("rio_request", "write_inline", b"\x10\x00" + request(flags=1, command=0xFFFF0002, data=b"x" * 40))
write("rio_request", "command_direct", b"\x20\x00" + request(flags=2, command=11, tag_base=0x40000100))
write("rio_request", "reply_inline", b"\x10\x01" + reply(data_len=10, sent=b"0123456789"))
write("rio_request", "reply_direct", b"\x10\x01" + reply(data_len=1 << 20, inline=0))


# Cluster messages: byte 0 chooses the message, then its encoding (u32/u64/f64 little-endian,
# strings as u64 length + bytes, vectors as u64 count + items).
def q(*v):
    return struct.pack("<%dQ" % len(v), *v)


def s(text):
    return q(len(text)) + text.encode()


def f64(*v):
    return struct.pack("<%dd" % len(v), *v)


def figures(phase):
    return s(phase) + f64(1.5, 1.0, 2.0) + q(100, 200, 300, 400) + s("disk")


def element(key, node, pos):
    return s(key) + u32(node) + q(pos)


write("cluster_messages", "job_params", b"\x00" + q(100, 10, 1 << 30, 512 * 1024) + u32(4))
write("cluster_messages", "node_check", b"\x01" + q(1000) + f64(80.0, 60.0) + s("host:sda"))
write("cluster_messages", "local_done", b"\x02" + q(1000, 77, 2) + figures("phase1") + figures("phase2"))
write("cluster_messages", "merge_order", b"\x03" + q(2, 5, 6) + q(2, 0, 10) + q(2, 10, 20) + f64(90.0))
write("cluster_messages", "phase_figures", b"\x04" + figures("phase3b"))
write("cluster_messages", "sample_request", b"\x05" + u32(8) + q(2) + q(0, 99) + u32(1) + q(5, 50) + u32(0))
write("cluster_messages", "sample_reply",
      b"\x06" + q(2) + q(1) + element("abc", 1, 4) + q(2) + element("b", 1, 5) + element("c", 1, 9))
write("cluster_messages", "count_request", b"\x07" + q(1) + q(0, 100) + q(1) + element("key", 2, 3))
write("cluster_messages", "count_reply", b"\x08" + q(2) + q(2, 1, 2) + q(0))
# Counts for the fuzz target's selector (3 nodes of 64 records, 2 splits, 1 or 2 pivots each).
write("cluster_messages", "count_reply_two_pivots", b"\x08" + q(2) + q(2, 10, 20) + q(2, 30, 40))
write("cluster_messages", "count_reply_one_pivot", b"\x08" + q(2) + q(1, 21) + q(1, 43))

# Topology files (docs/sansim.md).
write("topology", "crossbar", "nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\n")
write("topology", "two_routers",
      "nodes 4 # four nodes\nrouter a ports 3 level 0\nrouter b ports 3 level 1\n"
      "link n0 a.0\nlink n1.x a.1\nlink n2 b.0\nlink n3 b.1\nlink a.2 b.2 mbps 100 delay_ns 25\n"
      "routing updown\n")
write("topology", "dual",
      "nodes 2 fabrics 2\nrouter x ports 2 fabric x\nrouter y ports 2 fabric y\n"
      "link n0.x x.0\nlink n1.x x.1\nlink n0.y y.0\nlink n1.y y.1\n")
write("topology", "table",
      "nodes 2\nrouter a ports 2 at 0 0\nrouter b ports 2 at 1 0\nlink n0 a.0\nlink n1 b.0\n"
      "link a.1 b.1\nrouting table\nroute a n1 1\nroute a n0 0\nroute b n0 1\nroute b n1 0\n")
write("topology", "mesh_xy",
      "nodes 2\nrouter a ports 2 at 0 0\nrouter b ports 2 at 1 0\nlink n0 a.0\nlink n1 b.0\n"
      "link a.1 b.1 delay_ns 10\nrouting xy\n")
