// msgbench-caf: the worker (one request on stdin, JSON lines on stdout) and,
// with
// --serve, the socket workload's server half. spec/README.md has the protocol.
#include <csignal>
#include <iostream>
#include <string>

#include <caf/all.hpp>

#include "worker.hpp"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  bool serve = argc > 1 && std::string(argv[1]) == "--serve";
  if (argc > 2 || (argc == 2 && !serve)) {
    std::cerr << "usage: " << argv[0] << " [--serve] < request.json\n";
    return 2;
  }
  std::string line;
  if (!std::getline(std::cin, line)) {
    std::cerr << "msgbench-caf: no request on stdin\n";
    return 2;
  }
  return serve ? msgbench::serve(line) : msgbench::work(line);
}
