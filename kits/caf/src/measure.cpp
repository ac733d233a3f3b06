#include "msgbench/measure.hpp"

#include <ctime>
#include <fstream>

#include <unistd.h>

namespace msgbench {

namespace {

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace

int64_t now_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}

int64_t cpu_ns() {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

int64_t peak_rss_bytes() {
  const std::string key = "VmHWM:";
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.compare(0, key.size(), key) == 0)
      return std::stoll(line.substr(key.size())) * 1024;
  return 0;
}

int64_t rss_bytes() {
  // /proc/self/statm: size resident ... in pages; cheaper than status to poll.
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

stamp stamp::now() {
  return {msgbench::now_ns(), msgbench::cpu_ns()};
}

void add_phase(json& measured, const std::string& phase, const stamp& from,
               const stamp& to) {
  measured[phase + "_wall_ns"] = to.wall_ns - from.wall_ns;
  measured[phase + "_cpu_ns"] = to.cpu_ns - from.cpu_ns;
}

} // namespace msgbench
