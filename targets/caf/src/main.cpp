// msgbench-caf: the worker (one request on stdin, JSON lines on stdout) and,
// with
// --serve, the socket workload's server half. spec/README.md has the protocol.
#include <csignal>
#include <iostream>
#include <string>

#include <sys/resource.h>

#include <caf/all.hpp>

#include "worker.hpp"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // socket: up to 1024 connections at each end, beyond the usual soft limit of
  // 1024 descriptors; take the hard limit.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0
      && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
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
