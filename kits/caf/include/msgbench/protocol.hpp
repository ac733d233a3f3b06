// The worker protocol's lines (spec/README.md): JSON on stdout, one a line, and
// the error a worker reports as {"type":"error","kind":...}.
#pragma once

#include <stdexcept>
#include <string>

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

// Writes one JSON line to stdout and flushes it: the harness reads each line
// as it comes (a progress line, the socket server's `listening`).
void say(const json& line);

// The error line of `kind` with `message`.
json error_line(const std::string& kind, const std::string& message);

} // namespace msgbench
