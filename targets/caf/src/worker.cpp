#include "worker.hpp"

#include <iostream>

#include <caf/all.hpp>

#include "workloads.hpp"

namespace msgbench {

int work(const std::string& request_line) {
  json request;
  std::string variant = "default";
  try {
    request = json::parse(request_line);
    if (request.contains("variant") && request["variant"].is_string())
      variant = request["variant"].get<std::string>();
  } catch (const std::exception& e) {
    say({{"type", "hello"},
         {"target", "caf"},
         {"runtime_version", runtime_version()},
         {"variant", variant}});
    say({{"type", "error"},
         {"kind", "internal"},
         {"message", std::string("the request is not JSON: ") + e.what()}});
    return 0;
  }
  say({{"type", "hello"},
       {"target", "caf"},
       {"runtime_version", runtime_version()},
       {"variant", variant}});
  try {
    caf::actor_system_config cfg;
    const worker_options opts =
        apply_options(request.value("options", json::object()), cfg);
    const std::string workload = request.value("workload", "");
    const json params = request.value("params", json::object());
    json result;
    if (workload == "ring")
      result = run_ring(params, cfg);
    else if (workload == "fanin")
      result = run_fanin(params, cfg, opts);
    else if (workload == "chat")
      result = run_chat(params, cfg);
    else if (workload == "socket")
      result = run_socket(params, request_line, cfg);
    else
      throw worker_error("unsupported",
                         "workload " + workload
                             + " is not implemented by the caf worker");
    result["type"] = "result";
    say(result);
  } catch (const worker_error& e) {
    say({{"type", "error"}, {"kind", e.kind()}, {"message", e.what()}});
  } catch (const std::exception& e) {
    say({{"type", "error"}, {"kind", "internal"}, {"message", e.what()}});
  }
  return 0;
}

int serve(const std::string& request_line) {
  try {
    json request = json::parse(request_line);
    caf::actor_system_config cfg;
    apply_options(request.value("options", json::object()), cfg);
    serve_socket(request, cfg);
  } catch (const worker_error& e) {
    say({{"type", "error"}, {"kind", e.kind()}, {"message", e.what()}});
  } catch (const std::exception& e) {
    say({{"type", "error"}, {"kind", "internal"}, {"message", e.what()}});
  }
  return 0;
}

} // namespace msgbench
