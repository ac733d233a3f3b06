// Unit tests of the CAF kit: options, params, histograms, phases, and a request
// answered end to end by a worker with one fake workload. Prints "N passed, N
// failed".
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include "msgbench/histogram.hpp"
#include "msgbench/measure.hpp"
#include "msgbench/options.hpp"
#include "msgbench/pacer.hpp"
#include "msgbench/params.hpp"
#include "msgbench/worker.hpp"

namespace {

using msgbench::json;

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

// The message of the worker_error `f` throws ("" when it throws none), checking
// its kind.
template <class F> std::string error_of(F f, const std::string& kind) {
  try {
    f();
  } catch (const msgbench::worker_error& e) {
    check(e.kind() == kind, std::string(e.what()) + " is " + kind);
    return e.what();
  }
  return "";
}

void test_options() {
  const msgbench::options opts(
      json{{"max_threads", 2}, {"exit_signals", true}, {"frobs", 1}});
  check(error_of(
            [&] {
              opts.only({"max_threads", "exit_signals"});
            },
            "internal")
            == "unknown option frobs (known here: max_threads, exit_signals)",
        "an unknown option is named with the options read");
  check(error_of(
            [&] {
              msgbench::options(json{{"a", 1}}).only({});
            },
            "internal")
            == "unknown option a (known here: none)",
        "a workload reading no option says none");
  check(error_of(
            [&] {
              opts.only({"max_threads", "exit_signals", "frobs"});
            },
            "internal")
            .empty(),
        "known options pass");
  check(opts.flag("exit_signals") && !opts.flag("unset"), "flag");
  check(opts.positive("max_threads") == 2 && opts.positive("unset") == 0,
        "positive");
  const msgbench::options wrong(
      json{{"exit_signals", 0.5}, {"max_threads", 0}});
  check(error_of([&] { wrong.flag("exit_signals"); }, "internal")
                .find("exit_signals = 0.5")
            != std::string::npos,
        "a flag that is not a boolean is refused, naming it");
  check(error_of([&] { wrong.positive("max_threads"); }, "internal")
                .find("max_threads = 0")
            != std::string::npos,
        "a count below 1 is refused, naming it");
  check(!error_of([] { msgbench::options(json::array()); }, "internal").empty(),
        "options that are not an object are refused");
}

void test_params() {
  const json params = {{"n", 3}, {"payload", "x"}};
  check(msgbench::int_param(params, "n") == 3, "int_param");
  check(msgbench::string_param(params, "payload") == "x", "string_param");
  check(error_of([&] { msgbench::int_param(params, "m"); }, "internal")
            == "params.m is missing or not a number",
        "a missing param is named");
  check(!error_of([&] { msgbench::string_param(params, "n"); }, "internal")
             .empty(),
        "a param of the wrong type is refused");
}

// The vectors of tests/test_histogram.py (msgbench/histogram.py).
void test_histogram() {
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
  check(msgbench::histogram_pairs({{300, 2}, {5, 1}, {128, 7}})
            == json::parse("[[5,1],[128,7],[300,2]]"),
        "histogram pairs sorted by bucket");
}

// The open loop's schedule: evenly spaced without drift; a wait never ends
// before its due time, and a stop ends it at once.
void test_pacer() {
  const msgbench::pacer thirds(1000, 3);
  check(thirds.due(0) == 1000, "due(0) is the start");
  check(thirds.due(1) == 1000 + 333333333, "due(1) a third of a second on");
  check(thirds.due(3) == 1000 + 1000000000, "due(3): no drift from rounding");
  std::atomic<bool> stop{false};
  const int64_t t0 = msgbench::now_ns();
  const msgbench::pacer fast(t0, 10000); // 100 us apart: the spin decides
  bool on_time = true;
  for (int64_t i = 0; i < 20; ++i)
    on_time = msgbench::wait_until(fast.due(i), stop)
              && msgbench::now_ns() >= fast.due(i) && on_time;
  check(on_time, "wait_until returns at or after each due time");
  check(msgbench::now_ns() - t0 >= 1900000,
        "20 events at 10,000/s take 1.9 ms");
  stop = true;
  const int64_t t1 = msgbench::now_ns();
  check(!msgbench::wait_until(t1 + 10000000000, stop),
        "a stopped wait says so");
  check(msgbench::now_ns() - t1 < 1000000000, "a stopped wait ends at once");
}

void test_phase() {
  json measured = json::object();
  msgbench::add_phase(measured, "pass", {100, 10}, {350, 40});
  check(measured == json({{"pass_wall_ns", 250}, {"pass_cpu_ns", 30}}),
        "a phase's wall and cpu time");
  const msgbench::stamp a = msgbench::stamp::now();
  const msgbench::stamp b = msgbench::stamp::now();
  check(b.wall_ns >= a.wall_ns && a.wall_ns > 0 && b.cpu_ns >= a.cpu_ns,
        "the clocks do not run backwards");
  check(msgbench::peak_rss_bytes() >= msgbench::rss_bytes()
            && msgbench::rss_bytes() > 0,
        "peak RSS >= RSS > 0");
}

// What answer() writes on stdout for `line`, one JSON value a line.
std::vector<json> answered(const msgbench::worker& me, const std::string& line,
                           bool serve = false) {
  std::fflush(stdout);
  std::FILE* capture = std::tmpfile();
  const int saved = dup(STDOUT_FILENO);
  dup2(fileno(capture), STDOUT_FILENO);
  msgbench::answer(me, line, serve);
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::rewind(capture);
  std::vector<json> lines;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, capture) != nullptr)
    lines.push_back(json::parse(buffer));
  std::fclose(capture);
  return lines;
}

json echo(msgbench::request& req) {
  return {{"verify",
           {{"n", msgbench::int_param(req.params, "n")},
            {"loud", req.options.flag("loud")}}}};
}

void serve_echo(msgbench::request& req) {
  msgbench::say({{"type", "served"}, {"workload", req.workload}});
}

void test_answer() {
  const msgbench::worker me{"kit", {{"echo", {"loud"}, echo}}, serve_echo};
  auto lines = answered(me, R"({"workload":"echo","variant":"v",)"
                            R"("options":{"loud":true,"max_threads":1},)"
                            R"("params":{"n":4}})");
  check(lines.size() == 2 && lines[0]["type"] == "hello"
            && lines[0]["target"] == "kit" && lines[0]["variant"] == "v",
        "hello first, with the target and the variant");
  check(lines.size() == 2 && lines[1]["type"] == "result"
            && lines[1]["verify"] == json({{"n", 4}, {"loud", true}}),
        "then the workload's result");
  lines = answered(me, R"({"workload":"echo","options":{"x":1},"params":{}})");
  check(lines.size() == 2 && lines[1]["type"] == "error"
            && lines[1]["message"]
                   == "unknown option x (known here: max_threads, "
                      "max_throughput, loud)",
        "an unknown option: an error listing the scheduler's and the "
        "workload's options");
  lines = answered(me, R"({"workload":"echo","options":{"max_threads":0.5}})");
  check(lines.size() == 2 && lines[1]["kind"] == "internal"
            && lines[1]["message"].get<std::string>().find("max_threads")
                   != std::string::npos,
        "a scheduler option of the wrong kind is refused, naming it");
  lines = answered(me, R"({"workload":"teleport"})");
  check(lines.size() == 2 && lines[1]["kind"] == "unsupported"
            && lines[1]["message"].get<std::string>().find("runs echo")
                   != std::string::npos,
        "an unknown workload is unsupported, naming those it runs");
  lines = answered(me, "not json");
  check(lines.size() == 2 && lines[0]["type"] == "hello"
            && lines[1]["kind"] == "internal",
        "a request that is not JSON: hello, then an internal error");
  lines = answered(me, R"({"workload":"echo","params":{}})", true);
  check(lines.size() == 1
            && lines[0] == json({{"type", "served"}, {"workload", "echo"}}),
        "--serve: the server half's own lines, no hello");
}

} // namespace

int main() {
  test_options();
  test_params();
  test_histogram();
  test_pacer();
  test_phase();
  test_answer();
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
