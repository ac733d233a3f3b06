// socket echo in open loop (rate > 0, spec/workloads/socket.json): per socket
// a writer, a blocking actor of its own (a thread, as the socket's client
// actor), sends message i at its due time, start + i / (rate / sockets), never
// waiting for echoes, and late sends at once, never skipping; the client actor
// reads the echoes in order, checks each as the closed loop does, and records
// its latency from that due time (coordinated omission corrected: a client or
// server that falls behind is charged for the wait it caused). The framing and
// the server half are the closed loop's.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include <sys/socket.h>

#include <msgbench/kit.hpp>

#include "socket.hpp"

namespace msgbench {
namespace {

// What a writer shares with its socket's reader.
struct writer_state {
  std::atomic<int64_t> start_ns{0}; // its first send: the schedule's start
  std::atomic<bool> stop{false};    // the reader failed: stop sending
  // Read by the reader once the writer has terminated (wait_for).
  int64_t sent = 0, sent_bytes = 0;
  std::string error;
};

void writer_actor(caf::blocking_actor*, int fd, const socket_params* p,
                  const frames* f, writer_state* w) {
  const int64_t start = now_ns();
  const pacer schedule(start, p->rate / static_cast<double>(p->sockets));
  w->start_ns.store(start, std::memory_order_release);
  for (int64_t i = 0; i < p->messages; ++i) {
    if (!wait_until(schedule.due(i), w->stop))
      return;
    if (!write_all(fd, f->at(i), f->frame_bytes)) {
      if (w->stop.load())
        return; // the reader's failure closed the socket: it tells the story
      w->error =
          "sending message " + std::to_string(i + 1) + ": " + errno_text(errno);
      // The reader, waiting for an echo that cannot come now, fails at once.
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
    ++w->sent;
    w->sent_bytes += p->size;
  }
}

} // namespace

void run_echo_paced(caf::blocking_actor* self, int fd, const socket_params& p,
                    const frames& f, client_outcome& out) {
  writer_state w;
  caf::actor writer = self->spawn(writer_actor, fd, &p, &f, &w);
  std::vector<unsigned char> echo(f.frame_bytes);
  std::optional<pacer> schedule; // the writer's, known once it has started
  out.start_ns = now_ns();
  out.end_ns = out.start_ns;
  for (int64_t i = 0; i < p.messages; ++i) {
    if (!receive_echo(fd, p, f, i, echo, out))
      break;
    const int64_t now = now_ns();
    if (!schedule) { // echo 0 is back: message 0 was sent, so start_ns is set
      out.start_ns = w.start_ns.load(std::memory_order_acquire);
      schedule.emplace(out.start_ns, p.rate / static_cast<double>(p.sockets));
    }
    const int64_t latency = now - schedule->due(i);
    ++out.latency[histogram_bucket(
        static_cast<uint64_t>(std::max<int64_t>(latency, 0)))];
    out.latency_max_ns = std::max(out.latency_max_ns, latency);
    out.end_ns = now;
  }
  if (!out.error.empty()) {
    w.stop.store(true);
    ::shutdown(fd, SHUT_RDWR); // a writer blocked in a send fails at once
  }
  self->wait_for(writer);
  out.sent = w.sent;
  out.sent_bytes = w.sent_bytes;
  if (!w.error.empty()) // the reader's failure followed from the writer's
    out.error = w.error;
}

} // namespace msgbench
