// Shared by every workload: the protocol's lines, clocks, memory, errors, and
// the variant's options applied to CAF's configuration.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <caf/actor_system_config.hpp>
#include <nlohmann/json.hpp>

namespace msgbench {

using json = nlohmann::json;

// An error the worker reports as {"type":"error","kind":...}: unsupported,
// resource or internal (spec/README.md).
class worker_error : public std::runtime_error {
public:
  worker_error(std::string kind, const std::string& message)
      : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string& kind() const {
    return kind_;
  }

private:
  std::string kind_;
};

// Writes one JSON line to stdout and flushes it.
void say(const json& line);

// CLOCK_MONOTONIC in ns.
int64_t now_ns();
// CPU time of the whole process (every thread), ns.
int64_t cpu_ns();
// VmHWM / VmRSS of /proc/self/status, bytes.
int64_t peak_rss_bytes();
int64_t rss_bytes();

// The runtime's version, as the hello line says it.
std::string runtime_version();

// What the variant's options ask of the workloads themselves.
struct worker_options {
  // fanin: carry exit signals as CAF exit messages (send_exit, trapped with
  // set_exit_handler); without it a mix with exit signals is unsupported.
  bool exit_signals = false;
};

// Applies the variant's options to CAF's configuration: max_threads
// (scheduler.max-threads) and max_throughput (scheduler.max-throughput);
// returns the workloads' own (exit_signals). Any other key is an internal error
// naming it.
worker_options apply_options(const json& options,
                             caf::actor_system_config& cfg);

// params[name] as an integer / string, with the name in the error when it is
// missing.
int64_t int_param(const json& params, const char* name);
double number_param(const json& params, const char* name);
std::string string_param(const json& params, const char* name);

} // namespace msgbench
