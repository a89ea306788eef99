// Verbs transport set-up: choosing the device by its IPv4 address, the
// connection manager's listener, and connecting every pair of ranks at
// start-up (the higher rank connects, the lower accepts), as VIA did.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/log.hpp"
#include "transport/verbs/verbs_address.hpp"
#include "transport/verbs/verbs_transport.hpp"

namespace msg {
namespace {

constexpr int kResolveMs = 2000;

int peer_of(const rdma_cm_id *id) {
    return static_cast<int>(reinterpret_cast<intptr_t>(id->context));
}

void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace

VerbsTransport::~VerbsTransport() {
    shutdown();
    mrs_.reset();
    if (pd_ != nullptr) ibv_dealloc_pd(pd_);
    if (comp_channel_ != nullptr) ibv_destroy_comp_channel(comp_channel_);
    if (listener_ != nullptr) rdma_destroy_id(listener_);
    if (cm_channel_ != nullptr) rdma_destroy_event_channel(cm_channel_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

int VerbsTransport::open_listener(std::string *error) {
    const char *want_dev = want_device_.empty() ? nullptr : want_device_.c_str();
    const char *want_addr = want_addr_.empty() ? nullptr : want_addr_.c_str();
    ifaddrs *ifs = nullptr;
    if (getifaddrs(&ifs) != 0) return *error = "getifaddrs failed", -errno;
    std::string tried;
    for (ifaddrs *i = ifs; i != nullptr && listener_ == nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
        // The connection manager cannot resolve routes over loopback.
        if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) continue;
        sockaddr_in sin = *reinterpret_cast<sockaddr_in *>(i->ifa_addr);
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text);
        if (want_addr != nullptr && std::strcmp(want_addr, text) != 0) continue;
        sin.sin_port = 0;
        rdma_cm_id *id = nullptr;
        if (rdma_create_id(cm_channel_, &id, reinterpret_cast<void *>(intptr_t{-1}), RDMA_PS_TCP))
            continue;
        bool ok = rdma_bind_addr(id, reinterpret_cast<sockaddr *>(&sin)) == 0 && id->verbs;
        if (ok && want_dev != nullptr)
            ok = std::strcmp(ibv_get_device_name(id->verbs->device), want_dev) == 0;
        if (!tried.empty()) tried.append(", ");
        tried.append(i->ifa_name).append(" ").append(text);
        if (id->verbs != nullptr)
            tried.append(" (").append(ibv_get_device_name(id->verbs->device)).append(")");
        else
            tried.append(" (no RDMA device)");
        if (ok)
            listener_ = id;
        else
            rdma_destroy_id(id);
    }
    freeifaddrs(ifs);
    if (listener_ == nullptr) {
        error->assign("no RDMA device with an IPv4 address");
        if (want_dev != nullptr) error->append(" on device ").append(want_dev);
        if (want_addr != nullptr) error->append(" at ").append(want_addr);
        error->append(" (interfaces tried: ").append(tried.empty() ? "none" : tried).append(")");
        return -ENODEV;
    }
    if (rdma_listen(listener_, 128) != 0) return *error = "rdma_listen failed", -errno;
    local_ = *reinterpret_cast<sockaddr_in *>(rdma_get_local_addr(listener_));
    local_.sin_port = rdma_get_src_port(listener_);
    return 0;
}

int VerbsTransport::open(std::string *error) {
    cm_channel_ = rdma_create_event_channel();
    if (cm_channel_ == nullptr)
        return *error = std::string("rdma_create_event_channel failed: ") + std::strerror(errno) +
                        " (no RDMA connection manager: is rdma_ucm loaded?)",
               -ENODEV;
    set_nonblocking(cm_channel_->fd);
    if (int rc = open_listener(error)) return rc;
    verbs_ = listener_->verbs;

    ibv_device_attr dev{};
    ibv_port_attr port{};
    if (ibv_query_device(verbs_, &dev) != 0 || ibv_query_port(verbs_, listener_->port_num, &port))
        return *error = "cannot query the RDMA device", -EIO;
    max_sge_ = static_cast<size_t>(std::min(dev.max_sge, 4));
    sq_depth_ = static_cast<size_t>(std::min(dev.max_qp_wr, 256));
    srq_depth_ = static_cast<size_t>(std::min(dev.max_srq_wr, 4096));
    max_msg_ = port.max_msg_sz;
    rd_atomic_ = static_cast<uint8_t>(
        std::clamp(std::min(dev.max_qp_rd_atom, dev.max_qp_init_rd_atom), 1, 16));
    if (max_sge_ < 2 || srq_depth_ == 0)
        return *error = "the RDMA device has no shared receive queue or too few gather entries",
               -ENOTSUP;

    if ((pd_ = ibv_alloc_pd(verbs_)) == nullptr) return *error = "ibv_alloc_pd failed", -ENOMEM;
    if ((comp_channel_ = ibv_create_comp_channel(verbs_)) == nullptr)
        return *error = "ibv_create_comp_channel failed", -ENOMEM;
    set_nonblocking(comp_channel_->fd);
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = static_cast<uint32_t>(srq_depth_);
    sa.attr.max_sge = 1;
    if ((srq_ = ibv_create_srq(pd_, &sa)) == nullptr)
        return *error = std::string("ibv_create_srq failed: ") + std::strerror(errno), -ENOTSUP;
    max_cqe_ = dev.max_cqe;

    // One fd for the progress thread: completions and connection events.
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    for (int fd : {comp_channel_->fd, cm_channel_->fd}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
            return *error = "epoll set-up failed", -errno;
    }
    mrs_ = std::make_unique<RegistrationCache>(pd_, mr_cache_entries_, mr_cache_bytes_);

    address_ = pack_verbs_address(local_);
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &local_.sin_addr, text, sizeof text);
    log_debug("verbs: device %s, listening on %s:%u, sq %zu, srq %zu, sge %zu, max msg %zu, rd %u",
              ibv_get_device_name(verbs_->device), text, ntohs(local_.sin_port), sq_depth_,
              srq_depth_, max_sge_, max_msg_, rd_atomic_);
    return 0;
}

rdma_conn_param VerbsTransport::conn_param(const void *private_data, uint8_t len) const {
    rdma_conn_param p{};
    p.private_data = private_data;
    p.private_data_len = len;
    // RDMA reads in flight per queue pair, both ways (the rendezvous protocol).
    p.responder_resources = rd_atomic_;
    p.initiator_depth = rd_atomic_;
    p.retry_count = 7;
    // Receives are credit-managed, so receiver-not-ready is transient.
    p.rnr_retry_count = 7;
    return p;
}

int VerbsTransport::create_qp(rdma_cm_id *id) {
    if (id->verbs != verbs_) {
        log_error("verbs: a connection arrived on another RDMA device than %s",
                  ibv_get_device_name(verbs_->device));
        return -EXDEV;
    }
    ibv_qp_init_attr attr{};
    attr.send_cq = cq_;
    attr.recv_cq = cq_;
    attr.srq = srq_;
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 1;
    attr.cap.max_send_wr = static_cast<uint32_t>(sq_depth_);
    attr.cap.max_send_sge = static_cast<uint32_t>(max_sge_);
    if (rdma_create_qp(id, pd_, &attr) != 0) {
        int err = errno;
        log_error("verbs: rdma_create_qp failed: %s", std::strerror(err));
        return -err;
    }
    return 0;
}

int VerbsTransport::start_active(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (rdma_create_id(cm_channel_, &p.id, reinterpret_cast<void *>(intptr_t{peer}), RDMA_PS_TCP))
        return -errno;
    sockaddr_in src = local_, dst = remote_[static_cast<size_t>(peer)];
    src.sin_port = 0;
    p.state = PeerState::Resolving;
    if (rdma_resolve_addr(p.id, reinterpret_cast<sockaddr *>(&src),
                          reinterpret_cast<sockaddr *>(&dst), kResolveMs) != 0) {
        int err = errno;
        close_peer(p);
        return -err;
    }
    return 0;
}

void VerbsTransport::close_peer(Peer &p) {
    if (p.id != nullptr) {
        if (p.id->qp != nullptr) rdma_destroy_qp(p.id);
        rdma_destroy_id(p.id);
    }
    p.id = nullptr;
    p.state = PeerState::Idle;
    p.sq_used = 0;
}

// A higher rank asks to connect: its hello is checked, then the connection
// accepted with ours.
void VerbsTransport::accept_connect_request(const CmEvent &ev) {
    rdma_cm_id *id = ev.id;
    ConnectHello h{};
    const char *why = check_hello(ev.private_data, peers_.size(), &h);
    int r = static_cast<int>(h.rank);
    // Only a higher rank connects to us, and only while it is not connected.
    if (why == nullptr && r <= self_) why = "a rank that should be listening";
    if (why == nullptr && peers_[static_cast<size_t>(r)].state == PeerState::Connected)
        why = "a rank already connected";
    if (why != nullptr) {
        log_debug("verbs: refused a connection request (%zu bytes of private data): %s",
                  ev.private_data.size(), why);
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        return;
    }
    Peer &p = peers_[static_cast<size_t>(r)];
    close_peer(p);  // a retry replaces an attempt that failed half-way
    id->context = reinterpret_cast<void *>(intptr_t{r});
    p.id = id;
    p.state = PeerState::Connecting;
    ConnectHello mine{kHelloMagic, static_cast<uint32_t>(self_),
                      static_cast<uint32_t>(peers_.size())};
    rdma_conn_param param = conn_param(&mine, sizeof mine);
    if (create_qp(id) != 0 || rdma_accept(id, &param) != 0) {
        log_debug("verbs: accepting rank %d failed: %s", r, std::strerror(errno));
        close_peer(p);
    }
}

// A connection to rank r is up. When we connected to a lower rank, its answer
// must say it is that rank of this job.
void VerbsTransport::on_established(int r, const CmEvent &ev) {
    Peer &p = peers_[static_cast<size_t>(r)];
    ConnectHello h{};
    const char *why = r < self_ ? check_hello(ev.private_data, peers_.size(), &h) : nullptr;
    if (why == nullptr && r < self_ && static_cast<int>(h.rank) != r) why = "another rank answered";
    if (why != nullptr) {
        log_error("verbs: rank %d's address leads to an endpoint that is not it (%s)", r, why);
        rdma_disconnect(ev.id);
        p.state = PeerState::Lost;
        return;
    }
    p.state = PeerState::Connected;
}

void VerbsTransport::handle_cm_event(const CmEvent &ev) {
    rdma_cm_id *id = ev.id;
    if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        accept_connect_request(ev);
        return;
    }
    if (id == listener_) {
        if (ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL)
            for (size_t r = 0; r < peers_.size(); ++r)
                lose_peer(static_cast<int>(r), "the RDMA device was removed");
        return;
    }
    int r = peer_of(id);
    if (r < 0 || r >= static_cast<int>(peers_.size())) return;
    Peer &p = peers_[static_cast<size_t>(r)];
    if (p.id != id) return;  // an attempt already replaced
    switch (ev.type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
            if (rdma_resolve_route(id, kResolveMs) != 0) close_peer(p);
            break;
        case RDMA_CM_EVENT_ROUTE_RESOLVED: {
            ConnectHello mine{kHelloMagic, static_cast<uint32_t>(self_),
                              static_cast<uint32_t>(peers_.size())};
            rdma_conn_param param = conn_param(&mine, sizeof mine);
            p.state = PeerState::Connecting;
            if (create_qp(id) != 0 || rdma_connect(id, &param) != 0) close_peer(p);
            break;
        }
        case RDMA_CM_EVENT_ESTABLISHED:
            on_established(r, ev);
            break;
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_CONNECT_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_REJECTED:
            if (p.state == PeerState::Connected || p.state == PeerState::Lost) {
                lose_peer(r, rdma_event_str(ev.type));
            } else {
                // Set-up failed: the connecting side tries again.
                log_debug("verbs: connecting rank %d: %s (status %d)", r, rdma_event_str(ev.type),
                          ev.status);
                close_peer(p);
                p.retry = r < self_;
            }
            break;
        case RDMA_CM_EVENT_DISCONNECTED:
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
            lose_peer(r, rdma_event_str(ev.type));
            break;
        default:
            break;
    }
}

void VerbsTransport::drain_cm_events() {
    rdma_cm_event *raw = nullptr;
    while (cm_channel_ != nullptr && rdma_get_cm_event(cm_channel_, &raw) == 0) {
        // Copy and acknowledge first: destroying an id waits for its events' acks.
        CmEvent ev{raw->event, raw->id, raw->status, {}};
        if (raw->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
            raw->event == RDMA_CM_EVENT_ESTABLISHED) {
            const auto *d = static_cast<const uint8_t *>(raw->param.conn.private_data);
            if (d != nullptr) ev.private_data.assign(d, d + raw->param.conn.private_data_len);
        }
        rdma_ack_cm_event(raw);
        handle_cm_event(ev);
    }
}

int VerbsTransport::connect(const std::vector<std::vector<uint8_t>> &addresses) {
    const size_t n = addresses.size();
    peers_.assign(n, Peer{});
    remote_.assign(n, sockaddr_in{});
    for (size_t r = 0; r < n; ++r) {
        const auto &a = addresses[r];
        if (const char *why = parse_verbs_address(a, &remote_[r])) {
            log_error(
                "verbs: rank %zu sent a malformed verbs address (%zu bytes: %s; does every "
                "rank use VIADUCT_TRANSPORT=verbs?)",
                r, a.size(), why);
            return -EINVAL;
        }
        if (a == address_) self_ = static_cast<int>(r);
    }
    if (self_ < 0) return -EINVAL;

    // The completion queue holds every send queue and the shared receive queue.
    size_t peers = n - 1, want = peers * sq_depth_ + srq_depth_;
    if (want > static_cast<size_t>(max_cqe_)) {
        sq_depth_ = std::max<size_t>(8, (static_cast<size_t>(max_cqe_) - srq_depth_) / peers);
        want = peers * sq_depth_ + srq_depth_;
    }
    cq_ = ibv_create_cq(verbs_, static_cast<int>(want), nullptr, comp_channel_, 0);
    if (cq_ == nullptr) {
        log_error("verbs: ibv_create_cq(%zu) failed: %s", want, std::strerror(errno));
        return -ENOMEM;
    }
    ibv_req_notify_cq(cq_, 0);

    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(connect_timeout_ms_);
    for (int r = 0; r < self_; ++r) peers_[static_cast<size_t>(r)].retry = true;
    for (;;) {
        size_t up = 0;
        for (size_t r = 0; r < n; ++r) {
            Peer &p = peers_[r];
            if (p.state == PeerState::Connected) ++up;
            if (p.state == PeerState::Lost) {
                log_error("verbs: rank %zu went away while connecting", r);
                return -ECONNRESET;
            }
            if (p.retry && p.state == PeerState::Idle) {
                p.retry = false;
                if (start_active(static_cast<int>(r)) != 0) p.retry = true;
            }
        }
        if (up == peers) break;
        if (std::chrono::steady_clock::now() > deadline) {
            std::string missing;
            for (size_t r = 0; r < n; ++r)
                if (static_cast<int>(r) != self_ && peers_[r].state != PeerState::Connected)
                    missing.append(" ").append(std::to_string(r));
            log_error("verbs: no connection to rank(s)%s within %d ms", missing.c_str(),
                      connect_timeout_ms_);
            return -ETIMEDOUT;
        }
        pollfd pfd{cm_channel_->fd, POLLIN, 0};
        ::poll(&pfd, 1, 20);
        drain_cm_events();
    }
    log_debug("verbs: %zu queue pairs connected", peers);
    return 0;
}

void VerbsTransport::shutdown() {
    if (down_) return;
    down_ = true;
    for (Peer &p : peers_) close_peer(p);
    if (cq_ != nullptr) {
        drain_cq_events();
        if (cq_events_unacked_ != 0) ibv_ack_cq_events(cq_, cq_events_unacked_);
        cq_events_unacked_ = 0;
        ibv_destroy_cq(cq_);
        cq_ = nullptr;
    }
    if (srq_ != nullptr) ibv_destroy_srq(srq_);
    srq_ = nullptr;
    if (listener_ != nullptr) rdma_destroy_id(listener_);
    listener_ = nullptr;
}

}  // namespace msg
