// ring: N event-based actors in a ring, a token passed M laps
// (spec/workloads/ring.json).
//
// Phase 1 as the seed: the root spawns link N-1, each link spawns the next; the
// last link sends {connect, self, 1} to its predecessor, and each link, on
// connect from its successor, sends {connect, self, links + 1} on to its own
// predecessor and starts forwarding to that successor. Phase 2: the root sends
// {token, M, payload}; each link forwards what it gets (counting it), the root
// counts laps and sends {token, laps-1, payload} on until the last lap returns.
// Then a `collect` message goes once around, summing the links' own hop counts,
// and every link quits as it passes it on.
#include <future>

#include <caf/all.hpp>

#include "workloads.hpp"

namespace msgbench {
namespace {

using connect_atom = caf::atom_constant<caf::atom("connect")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using collect_atom = caf::atom_constant<caf::atom("collect")>;

struct ring_outcome {
  stamp created, passed;
  int64_t hops = 0, laps = 0, links = 0;
};

// One link: forwards every token to its successor and counts what it forwarded.
class ring_link : public caf::event_based_actor {
public:
  ring_link(caf::actor_config& cfg, int64_t remaining, caf::actor prev,
            caf::actor root)
      : caf::event_based_actor(cfg),
        remaining_(remaining),
        prev_(std::move(prev)),
        root_(std::move(root)) {}

  caf::behavior make_behavior() override {
    auto me = caf::actor_cast<caf::actor>(this);
    if (remaining_ == 1) { // the last link closes the ring onto the root
      send(prev_, connect_atom::value, me, int64_t{1});
      prev_ = nullptr;
      next_ = std::move(root_);
      return forwarding();
    }
    spawn<ring_link>(remaining_ - 1, me, root_);
    root_ = nullptr;
    return {
        [this](connect_atom, caf::actor& next, int64_t links) {
          send(prev_, connect_atom::value, caf::actor_cast<caf::actor>(this),
               links + 1);
          prev_ = nullptr;
          next_ = std::move(next);
          become(forwarding());
        },
    };
  }

private:
  caf::behavior forwarding() {
    return {
        [this](token_atom, int64_t laps, const std::string& payload) {
          send(next_, token_atom::value, laps, payload);
          ++hops_;
        },
        [this](collect_atom, int64_t hops) {
          send(next_, collect_atom::value, hops + hops_);
          next_ = nullptr;
          quit();
        },
    };
  }

  int64_t remaining_;
  caf::actor prev_, root_, next_;
  int64_t hops_ = 0;
};

// The root: builds the ring, then counts laps and sends the token on.
class ring_root : public caf::event_based_actor {
public:
  ring_root(caf::actor_config& cfg, int64_t n, int64_t m, std::string payload,
            std::promise<ring_outcome>* done)
      : caf::event_based_actor(cfg),
        n_(n),
        m_(m),
        payload_(std::move(payload)),
        done_(done) {}

  caf::behavior make_behavior() override {
    auto me = caf::actor_cast<caf::actor>(this);
    spawn<ring_link>(n_ - 1, me, me);
    return {
        [this](connect_atom, caf::actor& next, int64_t links) {
          out_.created = stamp::now();
          out_.links = links + 1; // the root is a link too
          next_ = std::move(next);
          send(next_, token_atom::value, m_, payload_);
          sends_ = 1;
          become(passing());
        },
    };
  }

private:
  caf::behavior passing() {
    return {
        [this](token_atom, int64_t laps, const std::string& payload) {
          ++out_.laps;
          if (laps == 1) {
            out_.passed = stamp::now();
            send(next_, collect_atom::value, int64_t{0});
            return;
          }
          send(next_, token_atom::value, laps - 1, payload);
          ++sends_;
        },
        [this](collect_atom, int64_t hops) {
          out_.hops = sends_ + hops;
          next_ = nullptr;
          done_->set_value(out_);
          quit();
        },
    };
  }

  int64_t n_, m_;
  std::string payload_;
  std::promise<ring_outcome>* done_;
  caf::actor next_;
  int64_t sends_ = 0;
  ring_outcome out_;
};

} // namespace

json run_ring(request& req) {
  const int64_t n = int_param(req.params, "n"), m = int_param(req.params, "m");
  const std::string payload = string_param(req.params, "payload");
  ring_outcome out;
  stamp begin;
  {
    caf::actor_system sys{req.config};
    std::promise<ring_outcome> done;
    auto result = done.get_future();
    begin = stamp::now();
    sys.spawn<ring_root>(n, m, payload, &done);
    out = result.get();
  } // the system waits for every actor to finish
  json measured = {{"peak_rss_bytes", peak_rss_bytes()}};
  add_phase(measured, "create", begin, out.created);
  add_phase(measured, "pass", out.created, out.passed);
  return {{"measured", measured},
          {"verify",
           {{"hops", out.hops}, {"laps", out.laps}, {"links", out.links}}}};
}

} // namespace msgbench
