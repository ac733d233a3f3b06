// One function per workload: runs it in a fresh actor system built from `cfg`
// and returns the result line's body ({"measured", "verify", "histograms"}).
#pragma once

#include <caf/actor_system_config.hpp>

#include "common.hpp"

namespace msgbench {

json run_ring(const json& params, caf::actor_system_config& cfg);
json run_fanin(const json& params, caf::actor_system_config& cfg,
               const worker_options& opts);
json run_chat(const json& params, caf::actor_system_config& cfg);
// The socket client (the worker) and its server half (--serve); `request_line`
// is the request as read, which the worker hands to its server.
json run_socket(const json& params, const std::string& request_line,
                caf::actor_system_config& cfg);
void serve_socket(const json& request, caf::actor_system_config& cfg);

} // namespace msgbench
