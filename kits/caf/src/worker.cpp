#include "msgbench/worker.hpp"

#include <algorithm>
#include <csignal>
#include <iostream>

#include <caf/config.hpp>

namespace msgbench {

const std::vector<std::string> scheduler_options = {"max_threads",
                                                    "max_throughput"};

std::string runtime_version() {
  return "CAF " + std::to_string(CAF_MAJOR_VERSION) + "."
         + std::to_string(CAF_MINOR_VERSION) + "."
         + std::to_string(CAF_PATCH_VERSION);
}

namespace {

const workload* find(const worker& me, const std::string& name) {
  auto it = std::find_if(me.workloads.begin(), me.workloads.end(),
                         [&](const workload& w) { return w.name == name; });
  return it == me.workloads.end() ? nullptr : &*it;
}

// Refuses what `w` does not read (every workload reads the scheduler's
// options), then applies the scheduler's to the request's configuration.
void read_options(request& req, const workload* w) {
  std::vector<std::string> known = scheduler_options;
  if (w != nullptr)
    known.insert(known.end(), w->options.begin(), w->options.end());
  req.options.only(known);
  if (const int64_t n = req.options.positive("max_threads"))
    req.config.set("scheduler.max-threads", n);
  if (const int64_t n = req.options.positive("max_throughput"))
    req.config.set("scheduler.max-throughput", n);
}

json run(const worker& me, request& req) {
  const workload* w = find(me, req.workload);
  if (w == nullptr) {
    std::string names;
    for (const auto& known : me.workloads)
      names += (names.empty() ? "" : ", ") + known.name;
    throw worker_error("unsupported", "workload " + req.workload
                                          + " is not implemented by the "
                                          + me.target + " worker (it runs "
                                          + names + ")");
  }
  read_options(req, w);
  json result = w->run(req);
  result["type"] = "result";
  return result;
}

} // namespace

void answer(const worker& me, const std::string& line, bool serve) {
  request req;
  req.line = line;
  const json parsed = json::parse(line, nullptr, false); // no exception
  const bool object = !parsed.is_discarded() && parsed.is_object();
  if (object && parsed.contains("variant") && parsed["variant"].is_string())
    req.variant = parsed["variant"].get<std::string>();
  if (!serve) // the server half's first line is its own (`listening`)
    say({{"type", "hello"},
         {"target", me.target},
         {"runtime_version", runtime_version()},
         {"variant", req.variant}});
  try {
    if (!object)
      throw worker_error("internal",
                         "the request is not a JSON object: " + line);
    req.workload = parsed.value("workload", "");
    req.params = parsed.value("params", json::object());
    req.options = msgbench::options(parsed.value("options", json::object()));
    if (serve) {
      read_options(req, find(me, req.workload));
      me.serve(req);
    } else {
      say(run(me, req));
    }
  } catch (const worker_error& e) {
    say(error_line(e.kind(), e.what()));
  } catch (const std::exception& e) {
    say(error_line("internal", e.what()));
  }
}

int main(int argc, char** argv, const worker& me) {
  // A peer that closes its end (the socket workload's, the harness's) is an
  // error to report, not a signal that ends the worker.
  std::signal(SIGPIPE, SIG_IGN);
  const bool serve =
      me.serve != nullptr && argc == 2 && std::string(argv[1]) == "--serve";
  if (argc > 2 || (argc == 2 && !serve)) {
    std::cerr << "usage: " << argv[0]
              << (me.serve != nullptr ? " [--serve]" : "")
              << " < request.json\n";
    return 2;
  }
  std::string line;
  if (!std::getline(std::cin, line)) {
    std::cerr << argv[0] << ": no request on stdin\n";
    return 2;
  }
  answer(me, line, serve);
  return 0;
}

} // namespace msgbench
