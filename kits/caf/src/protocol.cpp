#include "msgbench/protocol.hpp"

#include <cstdio>

namespace msgbench {

void say(const json& line) {
  std::string text = line.dump();
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

json error_line(const std::string& kind, const std::string& message) {
  return {{"type", "error"}, {"kind", kind}, {"message", message}};
}

} // namespace msgbench
