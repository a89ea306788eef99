// The counter sampler: a thread that wakes on a fixed timeline, reads the counters and the
// program's progress, and keeps the newest samples in a ring.
#include "viaduct/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace viaduct {

namespace {

double checked_rate(double rate_hz) {
    if (!(rate_hz > 0 && rate_hz <= Sampler::kMaxRateHz)) {
        std::ostringstream msg;
        msg << "Sampler: rate " << rate_hz << " Hz is not in (0, " << Sampler::kMaxRateHz << "]";
        throw std::invalid_argument(msg.str());
    }
    return rate_hz;
}

// The period of `rate_hz`, capped at a year: a rate so low that its period would not fit the
// clock samples only at start() and stop() either way.
Clock::duration period_of(double rate_hz) {
    const double seconds = std::min(1.0 / rate_hz, 365.0 * 86400);
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::size_t checked_capacity(std::size_t capacity) {
    if (capacity < 2) {
        throw std::invalid_argument("Sampler: a ring of " + std::to_string(capacity) +
                                    " samples is too small (at least 2)");
    }
    return capacity;
}

std::string checked_device(std::string name) {
    if (!name.empty() && !valid_block_device_name(name)) {
        throw std::invalid_argument("Sampler: '" + name + "' is not a device name of /sys/block");
    }
    return name;
}

}  // namespace

Sampler::Sampler(double rate_hz, std::size_t capacity, std::string block_device,
                 ProgressFn progress)
    : rate_hz_(checked_rate(rate_hz)),
      period_(period_of(rate_hz_)),
      block_device_(checked_device(std::move(block_device))),
      progress_(std::move(progress)),
      capacity_(checked_capacity(capacity)) {
    // Room for the whole ring, filled as samples come: an hour's ring is megabytes that a
    // short program would otherwise fault in (and zero) at its start.
    ring_.reserve(capacity_);
}

Sampler::~Sampler() {
    halt();
}

void Sampler::start() {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    if (thread_.joinable()) return;
    // The first sample is taken here, so a started sampler always has one; what the progress
    // function throws comes out of start() with no thread left behind.
    const Clock::time_point first_tick = Clock::now() + period_;
    sample_now();
    std::lock_guard<std::mutex> lock(control_);
    stop_requested_ = false;
    thread_error_ = nullptr;
    thread_ = std::thread([this, first_tick] { run(first_tick); });
}

void Sampler::stop() {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(control_);
        stop_requested_ = true;
    }
    wake_.notify_all();
    thread_.join();
    // The thread has ended: its error, if any, is no longer written to.
    if (std::exception_ptr error = std::exchange(thread_error_, nullptr)) {
        std::rethrow_exception(error);
    }
    sample_now();
}

void Sampler::halt() {
    try {
        stop();
    } catch (...) {
        // Destruction cannot report it; stop() is the place to see it.
    }
}

void Sampler::run(Clock::time_point next_tick) {
    std::unique_lock<std::mutex> lock(control_);
    while (!wake_.wait_until(lock, next_tick, [this] { return stop_requested_; })) {
        lock.unlock();
        try {
            sample_now();
        } catch (...) {
            lock.lock();
            thread_error_ = std::current_exception();
            return;
        }
        lock.lock();
        // Ticks on an absolute timeline, so the period does not drift by the time a sample
        // takes; when a whole period or more was lost (a loaded host), the missed ticks are
        // skipped to the first one still ahead rather than taken back to back.
        next_tick += period_;
        const Clock::time_point now = Clock::now();
        if (next_tick <= now) next_tick += ((now - next_tick) / period_ + 1) * period_;
    }
}

CounterSample Sampler::sample_now() {
    std::lock_guard<std::mutex> lock(sampling_);
    CounterSample s = read_counters(block_device_);
    if (mates_) s.job_cpu_us = mates_->cpu_us();
    if (progress_) {
        const Progress p = progress_();
        s.phase = p.phase;
        s.records = p.records;
        s.bytes = p.bytes;
        s.net_sent_bytes = p.net_sent_bytes;
        s.net_received_bytes = p.net_received_bytes;
    }
    push(s);
    return s;
}

void Sampler::count_job_mates() {
    JobMates found = JobMates::find();
    std::lock_guard<std::mutex> lock(sampling_);
    mates_ = std::move(found);
}

void Sampler::push(const CounterSample &s) {
    std::lock_guard<std::mutex> lock(ring_mutex_);
    if (ring_.size() < capacity_)
        ring_.push_back(s);
    else
        ring_[next_] = s;
    next_ = (next_ + 1) % capacity_;
    if (count_ < capacity_) {
        ++count_;
    } else {
        ++dropped_;
    }
}

std::vector<CounterSample> Sampler::samples() const {
    std::lock_guard<std::mutex> lock(ring_mutex_);
    std::vector<CounterSample> out;
    out.reserve(count_);
    const std::size_t oldest = (next_ + capacity_ - count_) % capacity_;
    for (std::size_t i = 0; i < count_; ++i) out.push_back(ring_[(oldest + i) % capacity_]);
    return out;
}

std::vector<CounterSample> Sampler::samples_from(uint64_t first, std::size_t max, uint64_t *from,
                                                 uint64_t *end) const {
    std::lock_guard<std::mutex> lock(ring_mutex_);
    *end = dropped_ + count_;
    *from = std::min(std::max(first, dropped_), *end);
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(*end - *from, max));
    const std::size_t oldest = (next_ + capacity_ - count_) % capacity_;
    const std::size_t skip = static_cast<std::size_t>(*from - dropped_);
    std::vector<CounterSample> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(ring_[(oldest + skip + i) % capacity_]);
    return out;
}

std::optional<CounterSample> Sampler::latest() const {
    std::lock_guard<std::mutex> lock(ring_mutex_);
    if (count_ == 0) return std::nullopt;
    return ring_[(next_ + capacity_ - 1) % capacity_];
}

uint64_t Sampler::dropped() const {
    std::lock_guard<std::mutex> lock(ring_mutex_);
    return dropped_;
}

}  // namespace viaduct
