// fanin: N sender actors send signals to one receiver actor for duration_ms
// (spec/workloads/fanin.json).
//
// A message is an ordinary CAF message carrying a fresh copy of the payload (a
// std::vector<uint64_t> of 1..size). An exit signal is CAF's own: the sender
// calls send_exit(receiver, reason), with a reason (caf::error) whose context
// is a fresh copy of the same list; the receiver traps exits with
// set_exit_handler, as an Erlang receiver with trap_exit, so it counts the
// exit_msg and lives on. Without the handler CAF's default would terminate the
// receiver, as Erlang's would.
//
// A sender is an event-based actor that loops the actor way: each `go` message
// makes it send one signal (its kind drawn at random with the mix's
// probabilities), check the stop flag, and send itself the next `go`. At the
// stop it sends `done` to the receiver (after its last signal, on the same FIFO
// path) and reports its counts to the main thread. The receiver finishes when
// every sender's `done` has arrived.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "workloads.hpp"

namespace msgbench {
namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;
using signal_atom = caf::atom_constant<caf::atom("signal")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

enum kind { message_kind = 0, exit_kind = 1 };

struct choice {
  double below; // a draw < below picks this row (unless an earlier one did)
  kind k;
  std::vector<uint64_t>
      words; // the prepared payload: 1..size, as lists:seq(1, Size)
};

struct counts {
  int64_t n[2] = {0, 0};
};

// What the senders report to the main thread once they have stopped.
struct reports {
  std::mutex lock;
  std::condition_variable all_in;
  int64_t pending = 0;
  counts sent;

  void add(const counts& c) {
    std::lock_guard<std::mutex> guard(lock);
    sent.n[0] += c.n[0];
    sent.n[1] += c.n[1];
    if (--pending == 0)
      all_in.notify_all();
  }
};

struct receipt {
  counts received;
  int64_t last_receive_ns = 0;
};

class receiver : public caf::event_based_actor {
public:
  receiver(caf::actor_config& cfg, int64_t senders, std::promise<receipt>* done)
      : caf::event_based_actor(cfg), senders_(senders), done_(done) {}

  caf::behavior make_behavior() override {
    set_exit_handler([this](caf::exit_msg&) { ++got_.received.n[exit_kind]; });
    return {
        [this](signal_atom, const std::vector<uint64_t>&) {
          ++got_.received.n[message_kind];
        },
        [this](done_atom) {
          if (++ended_ < senders_)
            return;
          got_.last_receive_ns = now_ns();
          done_->set_value(got_);
          quit();
        },
    };
  }

private:
  int64_t senders_;
  int64_t ended_ = 0;
  receipt got_;
  std::promise<receipt>* done_;
};

class sender : public caf::event_based_actor {
public:
  sender(caf::actor_config& cfg, caf::actor target,
         const std::vector<choice>* table, const std::atomic<bool>* stop,
         reports* out, uint64_t seed)
      : caf::event_based_actor(cfg),
        target_(std::move(target)),
        table_(table),
        stop_(stop),
        out_(out),
        rng_(seed) {}

  caf::behavior make_behavior() override {
    return {
        [this](go_atom) {
          const choice& c = pick();
          if (c.k == message_kind) {
            send(target_, signal_atom::value, c.words); // a copy per send
          } else {
            send_exit(target_, caf::error(1, caf::atom("fanin"),
                                          caf::make_message(c.words)));
          }
          ++sent_.n[c.k];
          if (stop_->load(std::memory_order_relaxed)) {
            send(target_, done_atom::value);
            out_->add(sent_);
            target_ = nullptr;
            quit();
            return;
          }
          send(this, go_atom::value);
        },
    };
  }

private:
  const choice& pick() {
    const double draw = uniform_(rng_);
    const size_t last = table_->size() - 1;
    for (size_t i = 0; i < last; ++i)
      if (draw < (*table_)[i].below)
        return (*table_)[i];
    return (*table_)[last];
  }

  caf::actor target_;
  const std::vector<choice>* table_;
  const std::atomic<bool>* stop_;
  reports* out_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  counts sent_;
};

std::vector<choice> make_table(const json& mix) {
  std::vector<choice> table;
  double cumulative = 0;
  for (size_t i = 0; i < mix.size(); ++i) {
    const json& row = mix[i];
    const std::string k = row.at("kind").get<std::string>();
    if (k != "message" && k != "exit_signal")
      throw worker_error("internal", "mix[" + std::to_string(i)
                                         + "].kind = " + k
                                         + " is not a kind this worker knows");
    cumulative += row.at("percent").get<double>() / 100;
    std::vector<uint64_t> words(row.at("size").get<size_t>());
    for (size_t j = 0; j < words.size(); ++j)
      words[j] = j + 1;
    table.push_back({cumulative, k == "message" ? message_kind : exit_kind,
                     std::move(words)});
  }
  if (table.empty())
    throw worker_error("internal", "params.mix is empty");
  return table;
}

} // namespace

json run_fanin(request& req) {
  const json& params = req.params;
  const bool exit_signals = req.options.flag("exit_signals");
  const int64_t senders = int_param(params, "senders");
  const int64_t duration_ms = int_param(params, "duration_ms");
  const int64_t limit_bytes = int_param(params, "memory_limit_mb") << 20;
  const std::vector<choice> table = make_table(params.at("mix"));
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i].k == exit_kind && !exit_signals)
      throw worker_error(
          "unsupported",
          "exit signals are an Erlang notion (mix[" + std::to_string(i)
              + "].kind = exit_signal): this variant answers unsupported; "
                "CAF's "
                "nearest equivalent, send_exit trapped by set_exit_handler, is "
                "measured by the variant exit_signals (option exit_signals = "
                "true)");

  caf::actor_system sys{req.config};
  std::atomic<bool> stop{false};
  reports out;
  out.pending = senders;
  std::promise<receipt> done;
  auto receipt_future = done.get_future();
  auto target = sys.spawn<receiver>(senders, &done);
  std::random_device entropy;
  std::vector<caf::actor> all;
  all.reserve(static_cast<size_t>(senders));
  for (int64_t i = 0; i < senders; ++i)
    all.push_back(sys.spawn<sender>(target, &table, &stop, &out,
                                    (static_cast<uint64_t>(entropy()) << 32)
                                        ^ entropy()));

  const int64_t start_cpu = cpu_ns();
  const int64_t start = now_ns();
  for (auto& s : all)
    caf::anon_send(s, go_atom::value);
  all.clear();
  target = nullptr;

  // Sleep out the duration, watching memory: the receiver's mailbox is
  // unbounded.
  auto over_limit = [&] {
    const int64_t rss = rss_bytes();
    if (rss <= limit_bytes)
      return false;
    say(error_line("resource",
                   "the receiver's backlog pushed the worker's memory to "
                       + std::to_string(rss >> 20)
                       + " MiB, past memory_limit_mb = "
                       + std::to_string(limit_bytes >> 20)));
    std::_Exit(0);
  };
  const int64_t stop_at = start + duration_ms * 1000000;
  for (int64_t now = now_ns(); now < stop_at; now = now_ns()) {
    over_limit();
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::min<int64_t>(stop_at - now, 10000000)));
  }
  stop.store(true);
  {
    std::unique_lock<std::mutex> guard(out.lock);
    while (out.pending > 0) {
      out.all_in.wait_for(guard, std::chrono::milliseconds(5));
      guard.unlock();
      over_limit();
      guard.lock();
    }
  }
  const int64_t senders_stopped = now_ns();
  while (receipt_future.wait_for(std::chrono::milliseconds(5))
         != std::future_status::ready)
    over_limit();
  const receipt r = receipt_future.get();
  const int64_t end_cpu = cpu_ns();
  const int64_t last_receive = std::max(r.last_receive_ns, senders_stopped);
  return {
      {"measured",
       {{"send_ns", senders_stopped - start},
        {"receive_ns", last_receive - start},
        {"drain_ns", last_receive - senders_stopped},
        {"cpu_ns", end_cpu - start_cpu},
        {"peak_rss_bytes", peak_rss_bytes()}}},
      {"verify",
       {{"sent_message", out.sent.n[message_kind]},
        {"received_message", r.received.n[message_kind]},
        {"sent_exit_signal", out.sent.n[exit_kind]},
        {"received_exit_signal", r.received.n[exit_kind]},
        {"receiver_alive", 1}}},
  };
}

} // namespace msgbench
