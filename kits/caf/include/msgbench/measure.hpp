// Clocks and memory: what every workload's `measured` is made of.
#pragma once

#include <cstdint>
#include <string>

#include "protocol.hpp"

namespace msgbench {

// CLOCK_MONOTONIC in ns.
int64_t now_ns();
// CPU time of the whole process (every thread), ns.
int64_t cpu_ns();
// VmHWM of /proc/self/status / the resident set of /proc/self/statm, bytes.
int64_t peak_rss_bytes();
int64_t rss_bytes();

// Both clocks at one moment: a phase is the time between two stamps.
struct stamp {
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;
  static stamp now();
};

// Adds `<phase>_wall_ns` and `<phase>_cpu_ns`, from `from` to `to`, to
// `measured`.
void add_phase(json& measured, const std::string& phase, const stamp& from,
               const stamp& to);

} // namespace msgbench
