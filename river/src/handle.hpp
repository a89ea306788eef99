// What stands behind river_t: the shared core and this rank's source and sink ends.
#pragma once

#include <memory>

#include "core.hpp"
#include "sink.hpp"
#include "source.hpp"

struct river {
    river(msg_context_t *m, riv::Settings s) : core(m, std::move(s)) {}
    riv::Core core;
    std::unique_ptr<riv::Source> source;  // null unless this rank is a source
    std::unique_ptr<riv::Sink> sink;      // null unless this rank is a sink
};
