#include "msgbench/pacer.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <string>

#include "msgbench/measure.hpp"

namespace msgbench {

namespace {

constexpr int64_t ns_per_s = 1000000000;
constexpr int64_t sleep_slice_ns = 50000000;

} // namespace

pacer::pacer(int64_t start_ns, double per_second)
    : start_ns_(start_ns), interval_ns_(1e9 / per_second) {
  if (!(per_second > 0))
    throw std::invalid_argument("per_second = " + std::to_string(per_second)
                                + ": a rate must be > 0");
}

int64_t pacer::due(int64_t i) const {
  return start_ns_
         + static_cast<int64_t>(
             std::llround(static_cast<double>(i) * interval_ns_));
}

bool wait_until(int64_t due_ns, const std::atomic<bool>& stop) {
  for (int64_t rest = due_ns - now_ns(); rest > 0; rest = due_ns - now_ns()) {
    if (stop.load(std::memory_order_relaxed))
      return false;
    if (rest > pace_spin_ns) {
      const int64_t wake =
          now_ns() + std::min(rest - pace_spin_ns, sleep_slice_ns);
      const timespec at{static_cast<time_t>(wake / ns_per_s),
                        static_cast<long>(wake % ns_per_s)};
      // EINTR (a signal) just goes round the loop again.
      ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    }
  }
  return !stop.load(std::memory_order_relaxed);
}

} // namespace msgbench
