// socket: echo and flow over TCP (spec/workloads/socket.json), the worker as
// client and `msgbench-caf --serve` as its server half (spec/README.md,
// "Peers").
//
// Each socket end is a CAF blocking actor (spawned detached: a thread of its
// own) doing plain POSIX blocking reads and writes. CAF 0.17's own network
// layer, the libcaf_io broker, is event-driven: the middleman's multiplexer
// pushes new_data_msg to the broker as bytes arrive (Erlang's {active, true});
// the spec asks for passive, blocking reads, as the seed's {active, false}, and
// a detached blocking actor is CAF's idiom for blocking work.
//
// Framing: a 4-byte big-endian length, then `size` bytes of one value; the
// value changes from message to message. Echo: write a frame, read the echo
// back whole, check it. Flow: write every frame, shutdown(SHUT_WR), wait for
// the server's one-byte ack (sent once it has read everything up to EOF).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <future>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "socket.hpp"
#include "workloads.hpp"

extern char** environ;

namespace msgbench {

// ------------------------------------------------- shared with the open loop
// (socket.hpp)

std::string errno_text(int error) {
  return std::strerror(error);
}

bool write_all(int fd, const unsigned char* bytes, size_t length) {
  while (length > 0) {
    ssize_t n = ::send(fd, bytes, length, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes += n;
    length -= static_cast<size_t>(n);
  }
  return true;
}

int read_exact(int fd, unsigned char* bytes, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::read(fd, bytes + done, length - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0) {
      errno = ECONNRESET;
      return done == 0 ? 0 : -1;
    }
    done += static_cast<size_t>(n);
  }
  return 1;
}

uint32_t frame_length(const unsigned char* header) {
  return (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16)
         | (uint32_t{header[2]} << 8) | uint32_t{header[3]};
}

constexpr size_t frame_budget_bytes = 16
                                      << 20; // prepared frames, at most (>= 2)
constexpr size_t max_frames = 256;

frames prepare_frames(int64_t size, int64_t messages) {
  frames f;
  f.frame_bytes = header_bytes + static_cast<size_t>(size);
  f.count =
      std::clamp<size_t>(frame_budget_bytes / f.frame_bytes, 2, max_frames);
  f.count = std::min<size_t>(
      f.count, static_cast<size_t>(std::max<int64_t>(messages, 2)));
  f.bytes.resize(f.count * f.frame_bytes);
  for (size_t k = 0; k < f.count; ++k) {
    unsigned char* frame = f.bytes.data() + k * f.frame_bytes;
    const uint32_t length = static_cast<uint32_t>(size);
    frame[0] = static_cast<unsigned char>(length >> 24);
    frame[1] = static_cast<unsigned char>(length >> 16);
    frame[2] = static_cast<unsigned char>(length >> 8);
    frame[3] = static_cast<unsigned char>(length);
    std::memset(frame + header_bytes, static_cast<int>(k % 255 + 1),
                static_cast<size_t>(size));
  }
  return f;
}

bool receive_echo(int fd, const socket_params& p, const frames& f, int64_t i,
                  std::vector<unsigned char>& echo, client_outcome& out) {
  if (read_exact(fd, echo.data(), f.frame_bytes) != 1) {
    out.error =
        "reading echo " + std::to_string(i + 1) + ": " + errno_text(errno);
    return false;
  }
  if (frame_length(echo.data()) != static_cast<size_t>(p.size)) {
    out.error = "echo " + std::to_string(i + 1)
                + " has the wrong length: the stream is out of step";
    return false;
  }
  ++out.received;
  out.received_bytes += p.size;
  const unsigned char* frame = f.at(i);
  bool same = echo[header_bytes] == frame[header_bytes]
              && echo[f.frame_bytes - 1] == frame[f.frame_bytes - 1];
  if (same && p.check_content)
    same = std::memcmp(echo.data() + header_bytes, frame + header_bytes,
                       static_cast<size_t>(p.size))
           == 0;
  out.mismatches += same ? 0 : 1;
  return true;
}

namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;

constexpr int64_t ns_per_s = 1000000000;

socket_params read_params(const json& params) {
  socket_params p;
  const std::string mode = string_param(params, "mode");
  if (mode != "echo" && mode != "flow")
    throw worker_error("internal", "params.mode = " + mode + " is unknown");
  p.echo = mode == "echo";
  p.size = int_param(params, "size");
  p.messages = int_param(params, "total_bytes") / p.size;
  p.sockets = int_param(params, "sockets");
  p.check_content = int_param(params, "check_content") != 0;
  p.port = int_param(params, "port");
  // Sent only when > 0 (the spec's omit_at_default), and only with echo (the
  // harness checks the spec's requires).
  p.rate = params.contains("rate") ? number_param(params, "rate") : 0;
  if (params.value("data", "binary") != "binary")
    throw worker_error("unsupported", "data = " + params["data"].dump()
                                          + ": C++ has one kind of byte buffer "
                                            "(binary); list is Erlang's");
  return p;
}

// ---------------------------------------------------------------- the server
// half

struct served_counts {
  int64_t messages = 0, bytes = 0;
  std::string error;
};

// One connection of the server: echo each frame back, or read and discard to
// EOF and then ack with one byte.
void serve_connection(caf::blocking_actor*, int fd, bool echo,
                      std::promise<served_counts>* done) {
  served_counts out;
  std::vector<unsigned char> frame(header_bytes);
  for (;;) {
    int got = read_exact(fd, frame.data(), header_bytes);
    if (got == 0)
      break; // the client is done
    if (got < 0) {
      out.error = "reading a header: " + errno_text(errno);
      break;
    }
    const size_t length = frame_length(frame.data());
    frame.resize(header_bytes + length);
    if (read_exact(fd, frame.data() + header_bytes, length) != 1) {
      out.error = "reading a payload: " + errno_text(errno);
      break;
    }
    ++out.messages;
    out.bytes += static_cast<int64_t>(length);
    if (echo && !write_all(fd, frame.data(), frame.size())) {
      out.error = "echoing: " + errno_text(errno);
      break;
    }
  }
  if (!echo && out.error.empty()) {
    const unsigned char ack = 1;
    if (!write_all(fd, &ack, 1))
      out.error = "sending the ack: " + errno_text(errno);
  }
  ::close(fd);
  done->set_value(out);
}

std::atomic<bool> serving_done{false};

// The worker closes our stdin when it is gone or done: then we are too.
void watch_stdin() {
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  if (!serving_done.load()) {
    std::cerr << "msgbench-caf serve: stdin closed: exiting\n";
    std::_Exit(0);
  }
}

int listen_on(int64_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw worker_error("resource", "socket: " + errno_text(errno));
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    int error = errno;
    ::close(fd);
    if (error == EADDRINUSE)
      throw worker_error("resource",
                         "port " + std::to_string(port)
                             + " is in use (bind: " + errno_text(error)
                             + "): choose another port, or port = "
                               "0 for any free port");
    throw worker_error("resource", "cannot bind 0.0.0.0 port "
                                       + std::to_string(port) + ": "
                                       + errno_text(error));
  }
  if (::listen(fd, SOMAXCONN) != 0)
    throw worker_error("resource", "listen: " + errno_text(errno));
  return fd;
}

// ---------------------------------------------------------------- the peer
// process

class peer {
public:
  peer() = default;
  peer(const peer&) = delete;
  peer& operator=(const peer&) = delete;
  ~peer() {
    finish(5);
  }

  void start(const std::string& request_line) {
    std::vector<std::string> argv;
    const char* command = std::getenv("MSGBENCH_PEER_COMMAND");
    const char* cwd = std::getenv("MSGBENCH_PEER_CWD");
    const char* host = std::getenv("MSGBENCH_PEER_HOST");
    host_ = host != nullptr && *host != '\0' ? host : "127.0.0.1";
    if (command == nullptr) {
      char self[4096];
      ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
      if (n <= 0)
        throw worker_error("internal", "MSGBENCH_PEER_COMMAND is not set and "
                                       "/proc/self/exe is unreadable");
      argv = {std::string(self, static_cast<size_t>(n)), "--serve"};
    } else {
      json array = json::parse(command, nullptr, false);
      if (!array.is_array() || array.empty())
        throw worker_error("internal",
                           std::string("MSGBENCH_PEER_COMMAND must be a "
                                       "non-empty JSON array, not ")
                               + command);
      for (const auto& arg : array)
        argv.push_back(arg.get<std::string>());
    }
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0
        || ::pipe2(from_child, O_CLOEXEC) != 0)
      throw worker_error("resource", "pipe: " + errno_text(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    if (cwd != nullptr && *cwd != '\0')
      posix_spawn_file_actions_addchdir_np(&actions, cwd);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (auto& a : argv)
      args.push_back(a.data());
    args.push_back(nullptr);
    int error =
        ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    if (error != 0) {
      pid_ = 0;
      throw worker_error("internal", "cannot start the server " + argv[0] + ": "
                                         + errno_text(error));
    }
    std::string line = request_line + "\n";
    if (!write_all_pipe(line))
      throw worker_error("internal", "cannot write the request to the server");
  }

  // The next JSON line of the server within `limit_s`; throws on EOF or
  // timeout.
  json next_line(double limit_s, const char* waiting_for) {
    const int64_t deadline = now_ns() + static_cast<int64_t>(limit_s * 1e9);
    for (;;) {
      auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        json v = json::parse(line, nullptr, false);
        if (v.is_discarded() || !v.is_object())
          throw worker_error("internal",
                             "the server printed a line that is not JSON: "
                                 + line);
        if (v.value("type", "") == "error")
          throw worker_error(v.value("kind", "internal"),
                             "the server: " + v.value("message", ""));
        return v;
      }
      const int64_t left = deadline - now_ns();
      if (left <= 0)
        throw worker_error("internal", std::string("no ") + waiting_for
                                           + " from the server within "
                                           + std::to_string(limit_s) + " s");
      pollfd p{out_, POLLIN, 0};
      int ready = ::poll(&p, 1, static_cast<int>(left / 1000000 + 1));
      if (ready <= 0)
        continue;
      char chunk[4096];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        throw worker_error("internal", std::string("the server exited before ")
                                           + waiting_for);
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Closes the server's stdin and waits up to limit_s for it to exit, then
  // kills it.
  bool finish(int limit_s) {
    if (in_ >= 0) {
      ::close(in_);
      in_ = -1;
    }
    bool by_itself = true;
    if (pid_ > 0) {
      const int64_t deadline = now_ns() + limit_s * ns_per_s;
      int status = 0;
      for (;;) {
        pid_t done = ::waitpid(pid_, &status, WNOHANG);
        if (done == pid_ || (done < 0 && errno != EINTR))
          break;
        if (now_ns() >= deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          by_itself = false;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      pid_ = 0;
    }
    if (out_ >= 0) {
      ::close(out_);
      out_ = -1;
    }
    return by_itself;
  }

  const std::string& host() const {
    return host_;
  }

private:
  bool write_all_pipe(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(in_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  pid_t pid_ = 0;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  std::string host_;
};

// ---------------------------------------------------------------- the client

void run_echo(int fd, const socket_params& p, const frames& f,
              client_outcome& out) {
  std::vector<unsigned char> echo(f.frame_bytes);
  out.start_ns = now_ns();
  for (int64_t i = 0; i < p.messages; ++i) {
    const unsigned char* frame = f.at(i);
    if (!write_all(fd, frame, f.frame_bytes)) {
      out.error =
          "sending message " + std::to_string(i + 1) + ": " + errno_text(errno);
      break;
    }
    ++out.sent;
    out.sent_bytes += p.size;
    if (!receive_echo(fd, p, f, i, echo, out))
      break;
  }
  out.end_ns = now_ns();
}

void run_flow(int fd, const socket_params& p, const frames& f,
              client_outcome& out) {
  out.start_ns = now_ns();
  bool all_sent = true;
  for (int64_t i = 0; i < p.messages; ++i) {
    if (!write_all(fd, f.at(i), f.frame_bytes)) {
      out.error =
          "sending message " + std::to_string(i + 1) + ": " + errno_text(errno);
      all_sent = false;
      break;
    }
    ++out.sent;
    out.sent_bytes += p.size;
  }
  if (all_sent) {
    unsigned char ack = 0;
    if (::shutdown(fd, SHUT_WR) != 0 || read_exact(fd, &ack, 1) != 1)
      out.error = "waiting for the server's ack: " + errno_text(errno);
  }
  out.end_ns = now_ns();
}

// One client socket: waits for `go`, runs its whole sequence, closes the
// socket.
void client_actor(caf::blocking_actor* self, int fd, const socket_params* p,
                  const frames* f, client_outcome* out,
                  std::promise<void>* done) {
  self->receive([&](go_atom) {
    if (p->echo && p->rate > 0)
      run_echo_paced(self, fd, *p, *f, *out);
    else if (p->echo)
      run_echo(fd, *p, *f, *out);
    else
      run_flow(fd, *p, *f, *out);
  });
  ::close(fd);
  done->set_value();
}

int connect_to(const std::string& host, int64_t port, bool nodelay) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  int error = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (error != 0)
    throw worker_error("internal",
                       "cannot resolve " + host + ": " + gai_strerror(error));
  int fd = -1;
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = errno_text(errno);
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
      break;
    last = errno_text(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    throw worker_error("resource", "cannot connect to " + host + " port "
                                       + service + ": " + last);
  if (nodelay) {
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return fd;
}

// Up to 1024 connections at each end, beyond the usual soft limit of 1024
// descriptors: take the hard limit.
void raise_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0
      && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

} // namespace

void serve_socket(request& req) {
  const socket_params p = read_params(req.params);
  raise_file_limit();
  std::thread(watch_stdin).detach();
  int listener = listen_on(p.port);
  sockaddr_in bound{};
  socklen_t bound_length = sizeof bound;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  say({{"type", "listening"}, {"port", ntohs(bound.sin_port)}});
  caf::actor_system sys{req.config};
  std::vector<std::promise<served_counts>> done(static_cast<size_t>(p.sockets));
  for (int64_t k = 0; k < p.sockets; ++k) {
    int fd = -1;
    do {
      fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
      throw worker_error("resource", "accept: " + errno_text(errno));
    if (p.echo) {
      int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    sys.spawn(serve_connection, fd, p.echo, &done[static_cast<size_t>(k)]);
  }
  ::close(listener);
  served_counts total;
  for (auto& d : done) {
    served_counts c = d.get_future().get();
    total.messages += c.messages;
    total.bytes += c.bytes;
    if (total.error.empty() && !c.error.empty())
      total.error = c.error;
  }
  serving_done.store(true);
  if (!total.error.empty())
    throw worker_error("internal", total.error);
  say({{"type", "served"},
       {"messages", total.messages},
       {"bytes", total.bytes}});
}

json run_socket(request& req) {
  const socket_params p = read_params(req.params);
  raise_file_limit();
  const frames f = prepare_frames(p.size, p.messages);
  peer server;
  server.start(req.line);
  json listening = server.next_line(30, "listening");
  if (listening.value("type", "") != "listening")
    throw worker_error("internal", "the server said " + listening.dump()
                                       + " before listening");
  const int64_t port = listening.value("port", int64_t{0});
  std::vector<int> fds;
  try {
    for (int64_t k = 0; k < p.sockets; ++k)
      fds.push_back(connect_to(server.host(), port, p.echo));
  } catch (...) {
    for (int fd : fds)
      ::close(fd);
    throw;
  }
  std::vector<client_outcome> outcomes(static_cast<size_t>(p.sockets));
  std::vector<std::promise<void>> done(static_cast<size_t>(p.sockets));
  int64_t gate_ns = 0;
  {
    caf::actor_system sys{req.config};
    std::vector<caf::actor> clients;
    for (size_t k = 0; k < fds.size(); ++k)
      clients.push_back(
          sys.spawn(client_actor, fds[k], &p, &f, &outcomes[k], &done[k]));
    gate_ns = now_ns();
    for (auto& c : clients)
      caf::anon_send(c, go_atom::value);
    for (auto& d : done)
      d.get_future().wait();
  }
  json elapsed = json::array();
  int64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0,
          mismatches = 0, last_end = gate_ns;
  std::string error;
  std::unordered_map<int64_t, int64_t> latency;
  int64_t latency_max_ns = 0;
  for (const auto& o : outcomes) {
    elapsed.push_back(o.end_ns - o.start_ns);
    for (const auto& [bucket, count] : o.latency)
      latency[bucket] += count;
    latency_max_ns = std::max(latency_max_ns, o.latency_max_ns);
    sent += o.sent;
    sent_bytes += o.sent_bytes;
    received += o.received;
    received_bytes += o.received_bytes;
    mismatches += o.mismatches;
    last_end = std::max(last_end, o.end_ns);
    if (error.empty() && !o.error.empty())
      error = o.error;
  }
  if (!error.empty()) {
    server.next_line(5, "served or error"); // relays the server's error if any
    throw worker_error("internal", error);
  }
  json served = server.next_line(30, "served");
  if (served.value("type", "") != "served")
    throw worker_error("internal",
                       "the server said " + served.dump() + ", not served");
  if (!p.echo) {
    received = served.value("messages", int64_t{0});
    received_bytes = served.value("bytes", int64_t{0});
  }
  if (!server.finish(5))
    throw worker_error("internal", "the server did not exit within 5 s after "
                                   "it printed served (killed)");
  json result = {
      {"measured",
       {{"elapsed_ns", elapsed},
        {"wall_ns", last_end - gate_ns},
        {"peak_rss_bytes", peak_rss_bytes()}}},
      {"verify",
       {{"messages_sent", sent},
        {"messages_received", received},
        {"bytes_sent", sent_bytes},
        {"bytes_received", received_bytes},
        {"content_mismatches", mismatches}}},
  };
  if (p.rate > 0) {
    result["measured"]["latency_max_ns"] = latency_max_ns;
    result["histograms"] = {{"latency_ns", histogram_pairs(latency)}};
  }
  return result;
}

} // namespace msgbench
