// An environment variable set (or removed) for one scope and restored at its end.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>

namespace testing_env {

class ScopedEnv {
  public:
    ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
        if (const char *old = getenv(name)) old_ = old;
        if (value)
            setenv(name, value->c_str(), 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            setenv(name_.c_str(), old_->c_str(), 1);
        else
            unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    std::string name_;
    std::optional<std::string> old_;
};

}  // namespace testing_env
