// The user's cache directory for viaduct's measured figures (sortapp's disk figures, libmsg's
// tuned protocol tables): $XDG_CACHE_HOME/viaduct, else $HOME/.cache/viaduct.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "viaduct/env.hpp"

namespace viaduct {

// "" when there is none. Only absolute directories count (as the XDG spec says); with HOME
// unset (cron, systemd, env -i) the password database names the home. Never a shared
// directory such as /tmp.
inline std::string user_cache_dir() {
    std::string base = env::text("XDG_CACHE_HOME");
    if (base.empty() || base[0] != '/') {
        std::string home = env::text("HOME");
        if (home.empty() || home[0] != '/') {
            struct passwd pw {
            }, *found = nullptr;
            std::vector<char> buf(16384);
            home = ::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found &&
                           pw.pw_dir != nullptr && pw.pw_dir[0] == '/'
                       ? pw.pw_dir
                       : "";
        }
        if (home.empty()) return "";
        base = home + "/.cache";
    }
    return base + "/viaduct";
}

}  // namespace viaduct
