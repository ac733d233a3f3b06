#pragma once

#include <string>

namespace msgbench {

// Answers one request line: hello, then a result or an error. Returns the exit
// status.
int work(const std::string& request_line);
// The socket server half: listening, then served (or an error).
int serve(const std::string& request_line);

} // namespace msgbench
