// Workloads not implemented yet: unsupported.
#include "workloads.hpp"

namespace msgbench {

json run_chat(const json&, caf::actor_system_config&) {
  throw worker_error("unsupported",
                     "chat is not implemented by the caf worker yet");
}

} // namespace msgbench
