// Unit tests of the caf worker: the histogram's bucket vectors, a small ring's
// counts, and the options reader. Prints "N passed, N failed".
#include <cstdio>
#include <string>

#include <caf/all.hpp>

#include "common.hpp"
#include "histogram.hpp"
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

// The vectors of tests/test_histogram.py (msgbench/histogram.py).
void test_histogram_vectors() {
  const std::pair<uint64_t, int64_t> vectors[] = {
      {0, 0},
      {1, 1},
      {127, 127},
      {128, 128},
      {129, 128},
      {255, 191},
      {256, 192},
      {1000, 317},
      {65535, 703},
      {1000000, 954},
      {1000000000, 1591},
      {1ULL << 40, 2240},
      {1ULL << 62, 3648},
  };
  for (const auto& [value, bucket] : vectors)
    check(msgbench::histogram_bucket(value) == bucket,
          "bucket(" + std::to_string(value) + ") == " + std::to_string(bucket));
}

void test_ring_counts(int64_t max_threads) {
  caf::actor_system_config cfg;
  msgbench::apply_options({{"max_threads", max_threads}}, cfg);
  auto result =
      msgbench::run_ring({{"n", 50}, {"m", 7}, {"payload", "BOO!"}}, cfg);
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
  caf::actor_system_config cfg;
  msgbench::worker_options with_exits;
  with_exits.exit_signals = true;
  auto result = msgbench::run_fanin(fanin_params(3), cfg, with_exits);
  const auto& v = result["verify"];
  check(v["sent_exit_signal"].get<int64_t>() > 0, "fanin sent exit signals");
  check(v["sent_message"].get<int64_t>() > 0, "fanin sent messages");
  check(v["received_exit_signal"] == v["sent_exit_signal"],
        "fanin received every exit signal");
  check(v["received_message"] == v["sent_message"],
        "fanin received every message");
  caf::actor_system_config plain;
  try {
    msgbench::run_fanin(fanin_params(1), plain, {});
    check(false, "fanin exit signals without the option throw");
  } catch (const msgbench::worker_error& e) {
    check(e.kind() == "unsupported", "fanin exit signals are unsupported");
  }
}

void test_chat_counts(const std::string& message, int64_t think_ms) {
  caf::actor_system_config cfg;
  auto result = msgbench::run_chat({{"groups", 3},
                                    {"clients_per_group", 4},
                                    {"duration_s", 0.1},
                                    {"think_ms", think_ms},
                                    {"listener_delay_ms", 0},
                                    {"message", message},
                                    {"history", 5},
                                    {"drain_timeout_s", 10}},
                                   cfg);
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

void test_unknown_option_is_internal() {
  caf::actor_system_config cfg;
  try {
    msgbench::apply_options({{"no_such_option", 1}}, cfg);
    check(false, "an unknown option throws");
  } catch (const msgbench::worker_error& e) {
    check(e.kind() == "internal", "an unknown option is internal");
    check(std::string(e.what()).find("no_such_option") != std::string::npos,
          "the error names the option");
  }
}

} // namespace

int main() {
  test_histogram_vectors();
  test_ring_counts(1);
  test_ring_counts(4);
  test_fanin_exit_signals();
  test_chat_counts("text", 0);
  test_chat_counts("binary", 10);
  test_unknown_option_is_internal();
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
