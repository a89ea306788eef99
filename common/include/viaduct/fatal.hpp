// The last word of a program that hits an exception nothing caught (on any thread): a thread
// that could not be started under a process or address-space limit, memory that ran out. It
// names the failure in one line instead of "terminate called after throwing ..." and an
// abort with a core dump, and ends the process with exit status 1.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <system_error>

namespace viaduct {

// What the exception being handled means, for a person.
inline std::string describe_current_exception() {
    std::exception_ptr e = std::current_exception();
    if (!e) return "stopped by std::terminate without an exception";
    try {
        std::rethrow_exception(e);
    } catch (const std::bad_alloc &) {
        return "out of memory (an address-space limit, ulimit -v, too low for this work?)";
    } catch (const std::system_error &x) {
        return std::string("a system resource was refused: ") + x.what() +
               " (a thread, process or address-space limit too low for this work?)";
    } catch (const std::exception &x) {
        return std::string("unexpected error: ") + x.what();
    } catch (...) {
        return "unexpected error of an unknown kind";
    }
}

namespace detail {
inline const char *fatal_tool = "viaduct";
inline void (*fatal_hook)(const std::string &) = nullptr;
}  // namespace detail

// Installs the handler for the whole process. `hook`, when given, is called with the full
// message and must not return (a program that tracks files to remove passes its own exit,
// which removes them first); otherwise the message goes to stderr and the process _exits(1).
inline void install_fatal_handler(const char *tool, void (*hook)(const std::string &) = nullptr) {
    detail::fatal_tool = tool;
    detail::fatal_hook = hook;
    std::set_terminate([] {
        const std::string message =
            std::string(detail::fatal_tool) + ": " + describe_current_exception();
        if (detail::fatal_hook != nullptr) detail::fatal_hook(message);
        std::fprintf(stderr, "%s\n", message.c_str());
        std::fflush(stderr);
        ::_exit(1);
    });
}

}  // namespace viaduct
