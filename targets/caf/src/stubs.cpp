// Workloads not implemented yet: unsupported.
#include "workloads.hpp"

namespace msgbench {

json run_chat(const json&, caf::actor_system_config&) {
  throw worker_error("unsupported",
                     "chat is not implemented by the caf worker yet");
}
json run_socket(const json&, const std::string&, caf::actor_system_config&) {
  throw worker_error("unsupported",
                     "socket is not implemented by the caf worker yet");
}
void serve_socket(const json&, caf::actor_system_config&) {
  throw worker_error("unsupported",
                     "socket is not implemented by the caf worker yet");
}

} // namespace msgbench
