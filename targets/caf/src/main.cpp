// msgbench-caf: the worker (one request on stdin, JSON lines on stdout) and,
// with --serve, the socket workload's server half (kits/caf: msgbench::main).
// Each workload: its name, the options it reads beside the scheduler's, its
// run.
#include "workloads.hpp"

int main(int argc, char** argv) {
  using namespace msgbench;
  const workload ring{"ring", {}, run_ring},
      fanin{"fanin", {"exit_signals"}, run_fanin}, chat{"chat", {}, run_chat},
      socket{"socket", {}, run_socket};
  return msgbench::main(argc, argv,
                        {"caf", {ring, fanin, chat, socket}, serve_socket});
}
