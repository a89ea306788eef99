// Status helpers.
#include "sortapp/status.hpp"

#include <cstring>

namespace sortapp {

Status Status::from_errno(const std::string &what, int err) {
    return Status(what + ": " + std::strerror(err));
}

}  // namespace sortapp
