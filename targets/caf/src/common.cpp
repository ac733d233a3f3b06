#include "common.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include <caf/atom.hpp>
#include <caf/config.hpp>

namespace msgbench {

void say(const json& line) {
  std::string text = line.dump();
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

namespace {

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t status_kib(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, key.size(), key) == 0)
      return std::stoll(line.substr(key.size()));
  }
  return 0;
}

} // namespace

int64_t now_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}

int64_t cpu_ns() {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

int64_t peak_rss_bytes() {
  return status_kib("VmHWM:") * 1024;
}

int64_t rss_bytes() {
  // /proc/self/statm: size resident ... in pages; cheaper than status to poll.
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::string runtime_version() {
  return "CAF " + std::to_string(CAF_MAJOR_VERSION) + "."
         + std::to_string(CAF_MINOR_VERSION) + "."
         + std::to_string(CAF_PATCH_VERSION);
}

worker_options apply_options(const json& options,
                             caf::actor_system_config& cfg) {
  worker_options out;
  if (options.is_null())
    return out;
  for (const auto& [key, value] : options.items()) {
    if (key == "max_threads" || key == "max_throughput") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1)
        throw worker_error("internal", "option " + key
                                           + " must be a positive integer, not "
                                           + value.dump());
      const int64_t n = value.get<int64_t>(); // a config_value integer
      if (key == "max_threads")
        cfg.set("scheduler.max-threads", n);
      else
        cfg.set("scheduler.max-throughput", n);
    } else if (key == "exit_signals") {
      if (!value.is_boolean())
        throw worker_error("internal",
                           "option exit_signals must be a boolean, not "
                               + value.dump());
      out.exit_signals = value.get<bool>();
    } else {
      throw worker_error("internal", "unknown option " + key
                                         + " (this worker knows max_threads, "
                                           "max_throughput, exit_signals)");
    }
  }
  return out;
}

int64_t int_param(const json& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || !it->is_number())
    throw worker_error("internal", std::string("params.") + name
                                       + " is missing or not a number");
  return it->get<int64_t>();
}

double number_param(const json& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || !it->is_number())
    throw worker_error("internal", std::string("params.") + name
                                       + " is missing or not a number");
  return it->get<double>();
}

std::string string_param(const json& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || !it->is_string())
    throw worker_error("internal", std::string("params.") + name
                                       + " is missing or not a string");
  return it->get<std::string>();
}

} // namespace msgbench
