// Errors as values: every sortapp operation returns a Status that is either ok or carries a
// message naming the problem (the file, the size, the errno text).
#pragma once

#include <string>
#include <utility>

namespace sortapp {

class Status {
  public:
    Status() = default;
    static Status ok() { return Status(); }
    static Status error(std::string message) { return Status(std::move(message)); }
    // "what: strerror(err)"
    static Status from_errno(const std::string &what, int err);

    bool is_ok() const { return !failed_; }
    explicit operator bool() const { return !failed_; }
    const std::string &message() const { return message_; }

  private:
    explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
    bool failed_ = false;
    std::string message_;
};

#define SORTAPP_TRY(expr)                     \
    do {                                      \
        ::sortapp::Status status_ = (expr);   \
        if (!status_.is_ok()) return status_; \
    } while (0)

}  // namespace sortapp
