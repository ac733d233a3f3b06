// chat: G groups of CPG users message each other for T seconds
// (spec/workloads/chat.json).
//
// Every group, user and client is an event-based actor. A client sends through
// its user to a peer drawn uniformly among the other members of its group:
// client -(post)-> its user -(relay)-> the group -(deliver)-> the peer's user,
// which keeps it in its history -(inbox)-> the peer's client, which counts it
// and records its latency. Stress (think_ms = 0): after each send the client
// sends itself `next`; deliveries already in its mailbox come first (FIFO), so
// it takes what is waiting and sends again; with listener_delay_ms > 0 the
// `next` is a delayed_send, and deliveries are handled meanwhile. Realistic:
// the client's `next` is a delayed_send to its next due time (the first at a
// uniform random phase within think_ms). At T a client stops sending and
// reports its count; the main thread then waits for received == sent or the
// drain timeout. CAF 0.17 has no supervisor tree: the main thread holds every
// actor's handle and ends them with exit_reason::kill.
#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "workloads.hpp"

namespace msgbench::chat_detail {

// One chat message; the body is immutable and shared (text: one sentence for
// the whole run; binary: a fresh encoded buffer per message).
struct chat_msg {
  int32_t from;    // the sender's index in its group
  int32_t to;      // the peer's index in the group
  int32_t group;   // the sender's group
  int64_t sent_at; // CLOCK_MONOTONIC ns when the client sent it
  std::shared_ptr<const std::string> body;
};

} // namespace msgbench::chat_detail

// Local messages only: never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(msgbench::chat_detail::chat_msg)

namespace msgbench {
namespace {

using chat_detail::chat_msg;

using go_atom = caf::atom_constant<caf::atom("go")>;
using next_atom = caf::atom_constant<caf::atom("next")>;
using post_atom = caf::atom_constant<caf::atom("post")>;
using relay_atom = caf::atom_constant<caf::atom("relay")>;
using deliver_atom = caf::atom_constant<caf::atom("deliver")>;
using inbox_atom = caf::atom_constant<caf::atom("inbox")>;
using members_atom = caf::atom_constant<caf::atom("members")>;
using client_atom = caf::atom_constant<caf::atom("client")>;

const char sentence[] = "I've been mad for fucking years\u2014absolutely years";

struct chat_params {
  int64_t groups, cpg;
  int64_t duration_ns, think_ns, listener_delay_ns;
  bool binary;
  int64_t history;
  int64_t drain_timeout_ns;
};

// What the main thread shares with the actors.
struct session {
  chat_params p;
  int64_t start = 0, deadline = 0;
  std::atomic<int64_t> ready{0};
  std::atomic<int64_t> stopped{0};
  std::atomic<int64_t> sent{0};
  std::shared_ptr<const std::string> text;
};

// A client's own counts, in a slot the main thread reads after the run.
struct client_stats {
  std::atomic<int64_t> received{0};
  int64_t in_window = 0, cross_group = 0, self_deliveries = 0;
  int64_t last_delivery = 0, latency_max = 0;
  std::unordered_map<int64_t, int64_t> latency; // bucket -> count
  bool started = false;
};

class group_actor : public caf::event_based_actor {
public:
  group_actor(caf::actor_config& cfg, session* s)
      : caf::event_based_actor(cfg), s_(s) {}

  caf::behavior make_behavior() override {
    s_->ready.fetch_add(1);
    return {
        [this](members_atom, std::vector<caf::actor>& members) {
          members_ = std::move(members);
        },
        [this](relay_atom, const chat_msg& m) {
          send(members_[static_cast<size_t>(m.to)], deliver_atom::value, m);
        },
    };
  }

private:
  session* s_;
  std::vector<caf::actor> members_;
};

class user_actor : public caf::event_based_actor {
public:
  user_actor(caf::actor_config& cfg, session* s, caf::actor group)
      : caf::event_based_actor(cfg), s_(s), group_(std::move(group)) {}

  caf::behavior make_behavior() override {
    history_.reserve(static_cast<size_t>(s_->p.history));
    s_->ready.fetch_add(1);
    return {
        [this](client_atom, caf::actor& client) {
          client_ = std::move(client);
        },
        [this](post_atom, const chat_msg& m) {
          send(group_, relay_atom::value, m);
        },
        [this](deliver_atom, const chat_msg& m) {
          keep(m);
          send(client_, inbox_atom::value, m);
        },
    };
  }

private:
  void keep(const chat_msg& m) {
    const size_t cap = static_cast<size_t>(s_->p.history);
    if (cap == 0)
      return;
    if (history_.size() < cap)
      history_.push_back(m);
    else
      history_[next_] = m;
    next_ = (next_ + 1) % cap;
  }

  session* s_;
  caf::actor group_;
  caf::actor client_;
  std::vector<chat_msg> history_; // the last `history` deliveries
  size_t next_ = 0;
};

class client_actor : public caf::event_based_actor {
public:
  client_actor(caf::actor_config& cfg, session* s, client_stats* stats,
               caf::actor user, int32_t group, int32_t index, uint64_t seed)
      : caf::event_based_actor(cfg),
        s_(s),
        stats_(stats),
        user_(std::move(user)),
        group_(group),
        index_(index),
        rng_(seed) {}

  caf::behavior make_behavior() override {
    stats_->started = true;
    s_->ready.fetch_add(1);
    return {
        [this](go_atom) {
          if (s_->p.think_ns == 0) {
            send_one();
            return;
          }
          // realistic: the first send at a uniform random phase within think_ms
          std::uniform_int_distribution<int64_t> phase(0, s_->p.think_ns - 1);
          due_ = s_->start + phase(rng_);
          schedule();
        },
        [this](next_atom) {
          if (s_->p.think_ns == 0) {
            send_one();
            return;
          }
          send_one();
          due_ += s_->p.think_ns;
          schedule();
        },
        [this](inbox_atom, const chat_msg& m) { receive(m); },
    };
  }

private:
  // Stress: one send, then the next after what is waiting (or the listener
  // delay). Realistic: one send (the caller schedules the next).
  void send_one() {
    const int64_t now = now_ns();
    if (now >= s_->deadline) {
      stop();
      return;
    }
    const int32_t peers = static_cast<int32_t>(s_->p.cpg);
    std::uniform_int_distribution<int32_t> draw(0, peers - 2);
    int32_t peer = draw(rng_);
    if (peer >= index_)
      ++peer; // skip itself
    chat_msg m{index_, peer, group_, now, s_->text};
    if (s_->p.binary)
      m.body = encode(now);
    send(user_, post_atom::value, std::move(m));
    ++sent_;
    if (s_->p.think_ns != 0)
      return;
    if (s_->p.listener_delay_ns == 0)
      send(this, next_atom::value);
    else
      delayed_send(this, std::chrono::nanoseconds(s_->p.listener_delay_ns),
                   next_atom::value);
  }

  void schedule() {
    if (stopped_)
      return;
    if (due_ >= s_->deadline) {
      stop();
      return;
    }
    const int64_t wait = std::max<int64_t>(due_ - now_ns(), 0);
    delayed_send(this, std::chrono::nanoseconds(wait), next_atom::value);
  }

  void stop() {
    if (stopped_)
      return;
    stopped_ = true;
    s_->sent.fetch_add(sent_);
    s_->stopped.fetch_add(1);
  }

  static std::shared_ptr<const std::string> encode(int64_t now) {
    auto body = std::make_shared<std::string>(sentence);
    for (int shift = 56; shift >= 0; shift -= 8)
      body->push_back(
          static_cast<char>((static_cast<uint64_t>(now) >> shift) & 0xff));
    return body;
  }

  void receive(const chat_msg& m) {
    const int64_t now = now_ns();
    stats_->received.fetch_add(1, std::memory_order_relaxed);
    if (now < s_->deadline)
      ++stats_->in_window;
    if (m.group != group_)
      ++stats_->cross_group;
    else if (m.from == index_)
      ++stats_->self_deliveries;
    const int64_t latency = std::max<int64_t>(now - m.sent_at, 0);
    ++stats_->latency[histogram_bucket(static_cast<uint64_t>(latency))];
    stats_->latency_max = std::max(stats_->latency_max, latency);
    stats_->last_delivery = now;
  }

  session* s_;
  client_stats* stats_;
  caf::actor user_;
  int32_t group_, index_;
  std::mt19937_64 rng_;
  int64_t sent_ = 0;
  int64_t due_ = 0;
  bool stopped_ = false;
};

// The params, as the harness checked them.
chat_params read_params(const json& params) {
  chat_params p;
  p.groups = int_param(params, "groups");
  p.cpg = int_param(params, "clients_per_group");
  p.duration_ns =
      static_cast<int64_t>(number_param(params, "duration_s") * 1e9);
  p.think_ns = int_param(params, "think_ms") * 1000000;
  p.listener_delay_ns = int_param(params, "listener_delay_ms") * 1000000;
  const std::string message = string_param(params, "message");
  if (message != "text" && message != "binary")
    throw worker_error("internal",
                       "params.message = " + message + " is unknown");
  p.binary = message == "binary";
  p.history = int_param(params, "history");
  p.drain_timeout_ns =
      static_cast<int64_t>(number_param(params, "drain_timeout_s") * 1e9);
  return p;
}

// Setup: a group actor per group, a user and a client actor per member; every
// actor spawned goes to `all`, the clients also to `clients`.
void spawn_actors(caf::actor_system& sys, session& s,
                  std::vector<client_stats>& stats,
                  std::vector<caf::actor>& all,
                  std::vector<caf::actor>& clients,
                  std::random_device& entropy) {
  for (int64_t g = 0; g < s.p.groups; ++g) {
    auto grp = sys.spawn<group_actor>(&s);
    all.push_back(grp);
    std::vector<caf::actor> members;
    members.reserve(static_cast<size_t>(s.p.cpg));
    for (int64_t i = 0; i < s.p.cpg; ++i) {
      const size_t k = static_cast<size_t>(g * s.p.cpg + i);
      auto user = sys.spawn<user_actor>(&s, grp);
      auto client = sys.spawn<client_actor>(
          &s, &stats[k], user, static_cast<int32_t>(g), static_cast<int32_t>(i),
          (static_cast<uint64_t>(entropy()) << 32) ^ entropy());
      caf::anon_send(user, client_atom::value, client);
      members.push_back(user);
      all.push_back(user);
      all.push_back(client);
      clients.push_back(client);
    }
    caf::anon_send(grp, members_atom::value, std::move(members));
  }
}

// T and the drain: release the clients, wait out T and until every client has
// stopped, then until received == sent or the drain timeout. Writes the send
// window, the memory at T and the sent count to `out`.
void run_and_drain(session& s, std::vector<caf::actor>& clients,
                   const std::vector<client_stats>& stats, int64_t users,
                   json& out) {
  s.start = now_ns();
  s.deadline = s.start + s.p.duration_ns;
  for (auto& c : clients)
    caf::anon_send(c, go_atom::value);
  clients.clear();
  std::this_thread::sleep_for(
      std::chrono::nanoseconds(std::max<int64_t>(s.deadline - now_ns(), 0)));
  const int64_t runtime_memory = rss_bytes(); // CAF has no memory view
  while (s.stopped.load() < users)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const int64_t stopped_at = now_ns();
  const int64_t sent = s.sent.load();
  auto received = [&] {
    int64_t sum = 0;
    for (auto& c : stats)
      sum += c.received.load(std::memory_order_relaxed);
    return sum;
  };
  const int64_t drain_end = stopped_at + s.p.drain_timeout_ns;
  while (received() < sent && now_ns() < drain_end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  out["measured"]["send_window_ns"] = stopped_at - s.start;
  out["measured"]["runtime_memory_bytes"] = runtime_memory;
  out["verify"]["sent"] = sent;
}

// After every actor ended: the clients' counts added up, their latencies
// merged.
void add_up(const session& s, const std::vector<client_stats>& stats,
            int64_t users, json& out) {
  int64_t received = 0, in_window = 0, cross = 0, self = 0, last = 0,
          max_latency = 0, started = 0;
  std::unordered_map<int64_t, int64_t> latency;
  for (auto& c : stats) {
    received += c.received.load();
    in_window += c.in_window;
    cross += c.cross_group;
    self += c.self_deliveries;
    last = std::max(last, c.last_delivery);
    max_latency = std::max(max_latency, c.latency_max);
    started += c.started ? 1 : 0;
    for (const auto& [bucket, count] : c.latency)
      latency[bucket] += count;
  }
  out["measured"]["drain_ns"] = std::max<int64_t>(last - s.deadline, 0);
  out["measured"]["received_in_window"] = in_window;
  // every group and user started (setup waited for them), the clients counted
  out["measured"]["processes_count"] = s.p.groups + users + started;
  out["measured"]["peak_rss_bytes"] = peak_rss_bytes();
  out["measured"]["latency_max_ns"] = max_latency;
  out["verify"]["received"] = received;
  out["verify"]["cross_group"] = cross;
  out["verify"]["self_deliveries"] = self;
  out["verify"]["users"] = started;
  out["histograms"] = {{"latency_ns", histogram_pairs(latency)}};
}

} // namespace

// The run, phase by phase: setup, T and the drain, stop every actor, add up.
json run_chat(request& req) {
  session s;
  s.p = read_params(req.params);
  s.text = std::make_shared<const std::string>(sentence);
  const int64_t users = s.p.groups * s.p.cpg;
  const int64_t procs = s.p.groups + 2 * users;
  std::vector<client_stats> stats(static_cast<size_t>(users));
  json out = {{"measured", json::object()}, {"verify", json::object()}};
  {
    caf::actor_system sys{req.config};
    std::vector<caf::actor> all;
    std::vector<caf::actor> clients;
    all.reserve(static_cast<size_t>(procs));
    clients.reserve(static_cast<size_t>(users));
    std::random_device entropy;
    const int64_t begin = now_ns();
    spawn_actors(sys, s, stats, all, clients, entropy);
    while (s.ready.load() < procs)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    out["measured"]["setup_ns"] = now_ns() - begin;
    run_and_drain(s, clients, stats, users, out);
    for (auto& a : all)
      caf::anon_send_exit(a, caf::exit_reason::kill);
    all.clear();
  } // the system waits for every actor to end
  add_up(s, stats, users, out);
  return out;
}

} // namespace msgbench
