// A sort node's state, shared by its main loop (node/node.cpp) and its halves of the phases
// (phases/*.cpp): what the monitor asked for, what the node made, and what its sorting thread
// is doing. Everything the node creates is tracked by sortapp::cleanup.
#pragma once

#include <msg/msg.h>
#include <rio/rio.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "liveness.hpp"
#include "messages.hpp"
#include "options.hpp"
#include "parallel_select.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/disk_probe.hpp"
#include "sortapp/input_identity.hpp"
#include "sortapp/io_ring.hpp"
#include "sortapp/memory_budget.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"
#include "viaduct/sampler.hpp"

namespace sortapp::cluster {

struct Node {
    Node(const JobOptions &o, msg_context_t *m, int r, int mon)
        : opts(o), msg(m), rank(r), monitor(mon) {}
    Node(const Node &) = delete;
    Node &operator=(const Node &) = delete;
    ~Node() {
        if (work_fd >= 0) close(work_fd);
        if (!job_dir.empty()) cleanup::remove(job_dir);
    }

    const JobOptions &opts;
    msg_context_t *msg;
    int rank;
    int monitor;  // the monitor's rank; the nodes are ranks 0..monitor-1
    rio_t *rio = nullptr;
    JobParams params;
    RecordFormat format;
    std::string input, output, scratch;
    InputIdentity input_at_start;  // taken at the check, compared before the commit
    std::string job_id;
    std::string job_dir;  // in scratch, this job's own: the work file and the runs
    std::string work;
    int work_fd = -1;
    std::mutex source_mu;
    std::unique_ptr<SortedSource> source;  // the work file, once phase 2 is done
    DiskBandwidth disk;
    std::string pending_output;  // phase 3b's complete output, under its temporary name
    bool committed = false;
    // Whether the monitor's final word has come, for a signal that arrives after the commit:
    // the whole job keeps or loses its outputs together, so the node waits for that word.
    struct FinalWord {
        std::mutex mu;
        std::condition_variable cv;
        bool heard = false;
    };
    std::shared_ptr<FinalWord> final_word = std::make_shared<FinalWord>();
    std::optional<int> exit_code;  // set by the final word: the node's orders are over
    // The network probe's replies: mapped, never written, so it costs no fresh memory (its
    // pages read as the kernel's shared zero page).
    sortapp::Buffer probe_bytes;

    // The sort's memory budget: the job's --memory, else this node's own default.
    uint64_t memory_budget() const {
        return params.memory_budget != 0 ? params.memory_budget : default_memory_budget().budget;
    }

    // What the sorting thread is doing, for the monitor's progress display and the samples:
    // the phase's index in phase_names, the table of every phase name so far (in the order
    // they first appeared, at most kMaxPhaseNames: later ones share the last entry).
    std::mutex progress_mu;
    std::string progress_phase = "waiting";
    uint64_t progress_done = 0, progress_total = 0;
    uint64_t progress_record_size = 0;  // the samples' records are the bytes done over it
    std::vector<std::string> phase_names{"waiting"};
    uint32_t phase_index = 0;
    void set_progress(const char *phase, uint64_t done, uint64_t total) {
        bool changed = false;
        {
            std::lock_guard<std::mutex> lk(progress_mu);
            changed = progress_phase != phase;
            progress_phase = phase;
            progress_done = done;
            progress_total = total;
            if (changed) phase_index = phase_number(phase);
        }
        if (!changed) return;
        set_phase(phase);  // outside the lock: the shadow thread reads progress
        // A sample at every phase's start, so the timeline holds every phase, however short.
        if (sampler) sampler->sample_now();
    }

    // Samples the node's counters from its start to its end (phases/counters.cpp); none when
    // the sampler could not start. Declared last, so it stops before what it reads goes.
    std::unique_ptr<viaduct::Sampler> sampler;

  private:
    // The phase's index in phase_names, which it joins if new (progress_mu held).
    uint32_t phase_number(const std::string &phase) {
        const std::string name = phase.empty() ? "-" : phase.substr(0, kMaxPhaseNameBytes);
        for (size_t i = 0; i < phase_names.size(); ++i)
            if (phase_names[i] == name) return static_cast<uint32_t>(i);
        if (phase_names.size() == kMaxPhaseNames) return kMaxPhaseNames - 1;
        phase_names.push_back(name);
        return static_cast<uint32_t>(phase_names.size() - 1);
    }
};

// One of the monitor's orders to the sorting thread. Its handler answers it exactly once.
struct Order {
    rio_incoming_t *in = nullptr;
    rio_request_info_t info{};
};
using OrderHandler = void (*)(Node &, const Order &);

inline int reply_error(rio_t *rio, rio_incoming_t *in, const std::string &message) {
    return rio_reply(rio, in, kNodeError, message.data(), message.size());
}

// A sort that ran out of memory under `budget` bytes, as a node reports it.
inline Status out_of_memory(const std::string &what, uint64_t budget) {
    return Status::error(what + "out of memory for a budget of " + std::to_string(budget) +
                         " bytes (a smaller --memory is needed)");
}

template <typename T>
int reply(rio_t *rio, rio_incoming_t *in, const T &value) {
    std::vector<char> bytes = encode(value);
    return rio_reply(rio, in, RIO_OK, bytes.data(), bytes.size());
}

}  // namespace sortapp::cluster
