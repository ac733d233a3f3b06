// A CAF worker's main: the request read, hello, the variant's scheduler options
// applied to CAF's configuration, the workload run, its result or error line.
// A target's main names its workloads and calls msgbench::main.
#pragma once

#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>

#include "options.hpp"
#include "protocol.hpp"

namespace msgbench {

// The options the kit reads for every workload: CAF's scheduler, configured
// before the workload builds its actor system from `request::config`.
// max_threads -> scheduler.max-threads, max_throughput ->
// scheduler.max-throughput.
extern const std::vector<std::string> scheduler_options;

// One request, read.
struct request {
  std::string line; // as read (the socket worker hands it to its server)
  std::string workload;
  std::string variant = "default";
  json params;
  msgbench::options options{nullptr};
  caf::actor_system_config config; // the scheduler options applied
};

// A workload: its name, the options it reads beside the scheduler's, and the
// run that returns the result line's body ({"measured", "verify", ...}).
struct workload {
  std::string name;
  std::vector<std::string> options;
  json (*run)(request&);
};

struct worker {
  std::string target; // the target's folder name, as hello says it
  std::vector<workload> workloads;
  // With --serve: a server half (the socket workload's), reading the same
  // request; it writes its own lines. Null: no --serve.
  void (*serve)(request&) = nullptr;
};

// The runtime's version, as hello says it: "CAF 0.17.6".
std::string runtime_version();

// Answers one request line on stdout: hello, then a result or an error line
// (with `serve`: the server half, which writes its own lines, or an error).
void answer(const worker& me, const std::string& line, bool serve);

// The whole process: `[--serve] < request.json`. Returns the exit status.
int main(int argc, char** argv, const worker& me);

} // namespace msgbench
