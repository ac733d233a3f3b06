// socket (socket.cpp): what the closed loop and the open loop
// (socket_open_loop.cpp) share, the frames and one socket's counts.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

namespace msgbench {

constexpr size_t header_bytes = 4;

struct socket_params {
  bool echo = true;
  int64_t size = 0;
  int64_t messages = 0;
  int64_t sockets = 0;
  bool check_content = true;
  int64_t port = 0;
  double rate = 0; // echo's round trips a second, all sockets; 0: closed loop
};

// The prepared frames: frame k is the 4-byte big-endian length and `size`
// bytes of one value, the value changing from frame to frame.
struct frames {
  size_t frame_bytes = 0;
  size_t count = 0;
  std::vector<unsigned char> bytes; // `count` frames back to back

  const unsigned char* at(int64_t i) const {
    return bytes.data()
           + static_cast<size_t>(i % static_cast<int64_t>(count)) * frame_bytes;
  }
};

frames prepare_frames(int64_t size, int64_t messages);

// One client socket's counts, its times and its first failure.
struct client_outcome {
  int64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
  int64_t mismatches = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::string error;
  // Open loop: each round trip from its message's due time, by bucket
  // (histogram.hpp), and the largest.
  std::unordered_map<int64_t, int64_t> latency;
  int64_t latency_max_ns = 0;
};

std::string errno_text(int error);

// Writes all of `bytes`; false on error (errno set) or a peer gone.
bool write_all(int fd, const unsigned char* bytes, size_t length);

// Reads exactly `length` bytes with blocking reads: 1 done, 0 EOF before the
// first byte, -1 error or EOF inside.
int read_exact(int fd, unsigned char* bytes, size_t length);

uint32_t frame_length(const unsigned char* header);

// Reads the echo of message i into `echo` (frame_bytes long) and counts it
// into `out`: its framing, and its content (check_content) or its first and
// last byte. False, with out.error, when it cannot be read or is out of step.
bool receive_echo(int fd, const socket_params& p, const frames& f, int64_t i,
                  std::vector<unsigned char>& echo, client_outcome& out);

// Echo in open loop on one connected socket: a writer (a blocking actor of its
// own) sends message i at its due time, rate / sockets a second from its first
// send, never waiting for echoes; the calling actor reads each echo, checks it
// as the closed loop does and records its latency from the due time.
void run_echo_paced(caf::blocking_actor* self, int fd, const socket_params& p,
                    const frames& f, client_outcome& out);

} // namespace msgbench
