// Unit tests of the caf worker: a small ring's counts, fanin's exit signals,
// chat's counts (the kit's own tests are kits/caf/tests). Prints "N passed, N
// failed".
#include <cstdio>
#include <string>

#include <caf/all.hpp>

#include "workloads.hpp"

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  }
}

// A request for `params`, with `options` read and applied as msgbench::main
// does before it runs the workload.
void make_request(msgbench::request& req, const msgbench::json& params,
                  const msgbench::json& options = {}) {
  req.params = params;
  req.options = msgbench::options(options);
  if (const int64_t n = req.options.positive("max_threads"))
    req.config.set("scheduler.max-threads", n);
}

void test_ring_counts(int64_t max_threads) {
  msgbench::request req;
  make_request(req, {{"n", 50}, {"m", 7}, {"payload", "BOO!"}},
               {{"max_threads", max_threads}});
  auto result = msgbench::run_ring(req);
  const std::string label =
      " (max_threads " + std::to_string(max_threads) + ")";
  check(result["verify"]["hops"] == 350, "ring hops == n * m" + label);
  check(result["verify"]["laps"] == 7, "ring laps == m" + label);
  check(result["verify"]["links"] == 50, "ring links == n" + label);
  check(result["measured"]["pass_wall_ns"].get<int64_t>() > 0,
        "ring pass_wall_ns > 0" + label);
}

msgbench::json fanin_params(int64_t senders) {
  return {{"senders", senders},
          {"duration_ms", 50},
          {"mix",
           {{{"percent", 50}, {"kind", "exit_signal"}, {"size", 10}},
            {{"percent", 50}, {"kind", "message"}, {"size", 10}}}},
          {"method", "msgbench"},
          {"memory_limit_mb", 8192}};
}

// Exit signals through send_exit / set_exit_handler: every one counted, the
// receiver alive; without the option the mix is unsupported.
void test_fanin_exit_signals() {
  msgbench::request with_exits;
  make_request(with_exits, fanin_params(3), {{"exit_signals", true}});
  auto result = msgbench::run_fanin(with_exits);
  const auto& v = result["verify"];
  check(v["sent_exit_signal"].get<int64_t>() > 0, "fanin sent exit signals");
  check(v["sent_message"].get<int64_t>() > 0, "fanin sent messages");
  check(v["received_exit_signal"] == v["sent_exit_signal"],
        "fanin received every exit signal");
  check(v["received_message"] == v["sent_message"],
        "fanin received every message");
  msgbench::request plain;
  make_request(plain, fanin_params(1));
  try {
    msgbench::run_fanin(plain);
    check(false, "fanin exit signals without the option throw");
  } catch (const msgbench::worker_error& e) {
    check(e.kind() == "unsupported", "fanin exit signals are unsupported");
  }
}

void test_chat_counts(const std::string& message, int64_t think_ms) {
  msgbench::request req;
  make_request(req, {{"groups", 3},
                     {"clients_per_group", 4},
                     {"duration_s", 0.1},
                     {"think_ms", think_ms},
                     {"listener_delay_ms", 0},
                     {"message", message},
                     {"history", 5},
                     {"drain_timeout_s", 10}});
  auto result = msgbench::run_chat(req);
  const auto& v = result["verify"];
  const std::string label =
      " (" + message + ", think " + std::to_string(think_ms) + ")";
  check(v["sent"].get<int64_t>() > 0, "chat sent" + label);
  check(v["received"] == v["sent"], "chat received == sent" + label);
  check(v["cross_group"] == 0, "chat cross_group == 0" + label);
  check(v["self_deliveries"] == 0, "chat self_deliveries == 0" + label);
  check(v["users"] == 12, "chat users == 12" + label);
  int64_t counted = 0;
  for (const auto& pair : result["histograms"]["latency_ns"])
    counted += pair[1].get<int64_t>();
  check(counted == v["received"].get<int64_t>(),
        "chat latency histogram counts every delivery" + label);
}

} // namespace

int main() {
  test_ring_counts(1);
  test_ring_counts(4);
  test_fanin_exit_signals();
  test_chat_counts("text", 0);
  test_chat_counts("binary", 10);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
