// Bootstrap through PMIx, for processes started by a PMIx server (Open MPI's
// mpirun, Slurm's srun --mpi=pmix): rank and size from the job's namespace,
// allgather as put + fence (collecting data) + get, barrier as a fence, and
// the server's process-termination events as peer failures.
#include "bootstrap/bootstrap.hpp"
#include "msg/msg.h"

#ifdef VIADUCT_HAVE_PMIX

#include <pmix.h>

#include <cstring>
#include <mutex>

#include "common/log.hpp"

namespace msg {

namespace {

class PmixBootstrap;

// PMIx is one per process, and so is its event handler's target.
std::mutex g_pmix_mu;
PmixBootstrap *g_current = nullptr;

class PmixBootstrap final : public Bootstrap {
  public:
    ~PmixBootstrap() override { leave(); }

    int start(std::string *error) {
        pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
        if (rc != PMIX_SUCCESS) {
            *error = std::string("PMIx_Init: ") + PMIx_Error_string(rc);
            return MSG_ERR_BOOTSTRAP;
        }
        initialized_ = true;
        PMIX_LOAD_PROCID(&all_, me_.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t *v = nullptr;
        rc = PMIx_Get(&all_, PMIX_JOB_SIZE, nullptr, 0, &v);
        if (rc != PMIX_SUCCESS || v == nullptr || v->type != PMIX_UINT32) {
            *error = std::string("PMIx_Get(PMIX_JOB_SIZE): ") + PMIx_Error_string(rc);
            if (v != nullptr) PMIX_VALUE_RELEASE(v);
            return MSG_ERR_BOOTSTRAP;
        }
        size_ = static_cast<int>(v->data.uint32);
        PMIX_VALUE_RELEASE(v);
        rank_ = static_cast<int>(me_.rank);
        {
            std::lock_guard<std::mutex> lk(g_pmix_mu);
            g_current = this;
        }
        pmix_status_t codes[] = {PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_ABORTED,
                                 PMIX_ERR_PROC_ABORTED_BY_SIG};
        rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], nullptr, 0,
                                         on_event, nullptr, nullptr);
        if (rc >= 0) {
            handler_ = static_cast<size_t>(rc);
            have_handler_ = true;
        } else {
            // Without it a dead peer is still noticed by the fabric; say so.
            log_debug("PMIx event handler not registered: %s", PMIx_Error_string(rc));
        }
        return MSG_OK;
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }

    int allgather(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                  int timeout_ms, std::string *error) override {
        std::string key = "viaduct.gather." + std::to_string(round_++);
        pmix_value_t val;
        PMIX_VALUE_CONSTRUCT(&val);
        val.type = PMIX_BYTE_OBJECT;
        val.data.bo.bytes = reinterpret_cast<char *>(const_cast<uint8_t *>(mine.data()));
        val.data.bo.size = mine.size();
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &val);
        if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            *error = std::string("PMIx_Put/Commit: ") + PMIx_Error_string(rc);
            return MSG_ERR_BOOTSTRAP;
        }
        int status = fence(true, timeout_ms, error);
        if (status != MSG_OK) return status;
        all.assign(static_cast<size_t>(size_), {});
        for (int r = 0; r < size_; ++r) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(r));
            pmix_value_t *v = nullptr;
            rc = PMIx_Get(&p, key.c_str(), nullptr, 0, &v);
            if (rc != PMIX_SUCCESS || v == nullptr || v->type != PMIX_BYTE_OBJECT) {
                *error =
                    "PMIx_Get of rank " + std::to_string(r) + "'s data: " + PMIx_Error_string(rc);
                if (v != nullptr) PMIX_VALUE_RELEASE(v);
                return MSG_ERR_BOOTSTRAP;
            }
            const auto *b = reinterpret_cast<const uint8_t *>(v->data.bo.bytes);
            all[static_cast<size_t>(r)].assign(b, b + v->data.bo.size);
            PMIX_VALUE_RELEASE(v);
        }
        return MSG_OK;
    }

    int barrier(int timeout_ms, std::string *error) override {
        return fence(false, timeout_ms, error);
    }

    void on_peer_failed(std::function<void(int)> callback) override {
        std::lock_guard<std::mutex> lk(g_pmix_mu);
        callback_ = std::move(callback);
    }

    void leave() override {
        if (!initialized_) return;
        {
            std::lock_guard<std::mutex> lk(g_pmix_mu);
            if (g_current == this) g_current = nullptr;
            callback_ = nullptr;
        }
        if (have_handler_) PMIx_Deregister_event_handler(handler_, nullptr, nullptr);
        PMIx_Finalize(nullptr, 0);
        initialized_ = false;
    }
    const char *method() const override { return "pmix"; }

  private:
    int fence(bool collect, int timeout_ms, std::string *error) {
        pmix_info_t info[2];
        size_t n = 0;
        bool yes = true;
        if (collect) {
            PMIX_INFO_CONSTRUCT(&info[n]);
            PMIX_INFO_LOAD(&info[n], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
            ++n;
        }
        if (timeout_ms >= 0) {
            // PMIx counts whole seconds, and 0 would mean no limit.
            int seconds = (timeout_ms + 999) / 1000;
            if (seconds < 1) seconds = 1;
            PMIX_INFO_CONSTRUCT(&info[n]);
            PMIX_INFO_LOAD(&info[n], PMIX_TIMEOUT, &seconds, PMIX_INT);
            ++n;
        }
        pmix_status_t rc = PMIx_Fence(&all_, 1, n > 0 ? info : nullptr, n);
        for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
        if (rc == PMIX_SUCCESS) return MSG_OK;
        *error = std::string("PMIx_Fence: ") + PMIx_Error_string(rc);
        return rc == PMIX_ERR_TIMEOUT ? MSG_ERR_TIMEOUT : MSG_ERR_BOOTSTRAP;
    }

    static void on_event(size_t, pmix_status_t, const pmix_proc_t *source, pmix_info_t info[],
                         size_t ninfo, pmix_info_t *, size_t,
                         pmix_event_notification_cbfunc_fn_t cb, void *cbdata) {
        const pmix_proc_t *who = source;
        for (size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                who = info[i].value.data.proc;
        std::function<void(int)> callback;
        int rank = -1;
        {
            std::lock_guard<std::mutex> lk(g_pmix_mu);
            if (g_current != nullptr && who != nullptr &&
                PMIX_CHECK_NSPACE(who->nspace, g_current->me_.nspace) &&
                who->rank != PMIX_RANK_WILDCARD && who->rank != g_current->me_.rank) {
                rank = static_cast<int>(who->rank);
                callback = g_current->callback_;
            }
        }
        if (callback && rank >= 0) callback(rank);
        if (cb != nullptr) cb(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
    }

    pmix_proc_t me_{};
    pmix_proc_t all_{};
    int rank_ = 0, size_ = 1;
    uint64_t round_ = 0;
    bool initialized_ = false;
    bool have_handler_ = false;
    size_t handler_ = 0;
    std::function<void(int)> callback_;  // guarded by g_pmix_mu
};

}  // namespace

bool pmix_built() {
    return true;
}

int make_pmix_bootstrap(int, std::unique_ptr<Bootstrap> *out, std::string *error) {
    auto b = std::make_unique<PmixBootstrap>();
    int rc = b->start(error);
    if (rc != MSG_OK) return rc;
    *out = std::move(b);
    return MSG_OK;
}

}  // namespace msg

#else

namespace msg {

bool pmix_built() {
    return false;
}

int make_pmix_bootstrap(int, std::unique_ptr<Bootstrap> *, std::string *error) {
    *error = "this libmsg was built without PMIx (Debian: libpmix-dev)";
    return MSG_ERR_NOT_SUPPORTED;
}

}  // namespace msg

#endif
