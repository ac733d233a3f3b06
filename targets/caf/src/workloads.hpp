// One function per workload: runs it in a fresh actor system built from the
// request's configuration and returns the result line's body.
#pragma once

#include <msgbench/kit.hpp>

namespace msgbench {

json run_ring(request& req);
json run_fanin(request& req); // reads the option exit_signals
json run_chat(request& req);
// The socket client (the worker) and its server half (--serve).
json run_socket(request& req);
void serve_socket(request& req);

} // namespace msgbench
