// An open loop's schedule (socket echo's rate): event i (from 0) is due at
// start + i / per_second. A sender waits for each event's due time and, when
// it is late, goes at once (it never skips), so a receiver that times each
// event from due(i) charges the system for any wait it caused (coordinated
// omission corrected).
#pragma once

#include <atomic>
#include <cstdint>

namespace msgbench {

class pacer {
public:
  // A schedule from start_ns (now_ns()) at per_second (> 0) events a second.
  pacer(int64_t start_ns, double per_second);

  // Event i's intended time, now_ns() ns.
  int64_t due(int64_t i) const;

private:
  int64_t start_ns_;
  double interval_ns_;
};

// How early wait_until stops sleeping and spins the rest: clock_nanosleep
// wakes about 50-60 us late (a normal thread's timer slack, then the wake-up),
// so sleeping until due - pace_spin_ns and spinning the few us left meets the
// due time without spinning whole intervals.
constexpr int64_t pace_spin_ns = 60000;

// Blocks the calling thread until now_ns() >= due_ns: sleeps, in slices of at
// most 50 ms so that a stop is seen, until pace_spin_ns before it, then spins.
// False when `stop` was set first.
bool wait_until(int64_t due_ns, const std::atomic<bool>& stop);

} // namespace msgbench
