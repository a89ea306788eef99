// Choosing how a process joins its job, and the job of one.
#include "bootstrap/bootstrap.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

#include "msg/msg.h"

namespace msg {

namespace {

class SingletonBootstrap final : public Bootstrap {
  public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int allgather(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all, int,
                  std::string *) override {
        all.assign(1, mine);
        return MSG_OK;
    }
    int barrier(int, std::string *) override { return MSG_OK; }
    void on_peer_failed(std::function<void(int)>) override {}
    void leave() override {}
    const char *method() const override { return "single"; }
};

bool set(const char *name) {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0';
}

// A launcher that started several tasks with no way for them to meet (srun without
// --mpi=pmix, a PMI-1 launcher): each would run alone as a job of one, N times over, and
// report success. Its name and task count, or null.
const char *launcher_without_pmix(long *tasks) {
    const struct {
        const char *variable, *launcher;
    } launchers[] = {{"SLURM_STEP_NUM_TASKS", "srun without --mpi=pmix"},
                     {"OMPI_COMM_WORLD_SIZE", "mpirun without PMIx"},
                     {"PMI_SIZE", "a PMI-1 launcher (mpiexec.hydra?)"}};
    for (const auto &l : launchers) {
        const char *v = std::getenv(l.variable);
        *tasks = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
        if (*tasks > 1) return l.launcher;
    }
    return nullptr;
}

}  // namespace

int make_bootstrap(const BootstrapSettings &settings, std::unique_ptr<Bootstrap> *out,
                   std::string *error) {
    const int timeout_ms = settings.timeout_ms;
    // Both arms string_view: with "auto" : method the result is a temporary std::string.
    std::string_view how = settings.method.empty() ? std::string_view("auto") : settings.method;
    if (how == "tcp") return make_tcp_bootstrap(settings, out, error);
    if (how == "pmix") return make_pmix_bootstrap(timeout_ms, out, error);
    if (how == "single") {
        *out = std::make_unique<SingletonBootstrap>();
        return MSG_OK;
    }
    if (how != "auto") {
        *error = "bootstrap method " + std::string(how) + " is not auto, tcp, pmix or single";
        return MSG_ERR_CONFIG;
    }
    if (set("VIADUCT_COORDINATOR")) return make_tcp_bootstrap(settings, out, error);
    if (set("VIADUCT_RANK") || set("VIADUCT_SIZE")) {
        *error = "VIADUCT_RANK/VIADUCT_SIZE are set but VIADUCT_COORDINATOR is not";
        return MSG_ERR_CONFIG;
    }
    if (set("PMIX_NAMESPACE") && set("PMIX_RANK"))
        return make_pmix_bootstrap(timeout_ms, out, error);
    long tasks = 0;
    if (const char *launcher = launcher_without_pmix(&tasks)) {
        *error = "this process is one of " + std::to_string(tasks) + " tasks started by " +
                 launcher +
                 ", which gives them no way to meet: each would run alone as a job "
                 "of one. Start them with srun --mpi=pmix, mpirun (Open MPI 4 or later) or "
                 "msgrun; VIADUCT_BOOTSTRAP=single runs each alone on purpose";
        return MSG_ERR_BOOTSTRAP;
    }
    *out = std::make_unique<SingletonBootstrap>();
    return MSG_OK;
}

}  // namespace msg
