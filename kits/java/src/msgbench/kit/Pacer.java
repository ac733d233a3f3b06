package msgbench.kit;

import java.util.concurrent.locks.LockSupport;

/**
 * An open loop's schedule: event i (from 0) is due at start + i / perSecond. A sender waits for
 * each event's due time and, when it is late, goes at once (it never skips), so a receiver that
 * times each event from due(i) charges the system for any wait it caused (coordinated omission
 * corrected).
 */
public final class Pacer {
  /**
   * How early a wait stops sleeping and spins the rest. LockSupport.parkNanos wakes about 50-60 µs
   * late on Linux (the timer slack of a normal thread, then the wake-up), so parking until due -
   * SPIN_NS and spinning the few µs left meets the due time without spinning whole intervals.
   */
  public static final long SPIN_NS = 60_000;

  private final long start;
  private final double intervalNs;

  /** A schedule from start (Proc.now() ns) at perSecond events per second (> 0). */
  public Pacer(long start, double perSecond) {
    if (!(perSecond > 0)) {
      throw new IllegalArgumentException("perSecond = " + perSecond + ": a rate must be > 0");
    }
    this.start = start;
    this.intervalNs = 1e9 / perSecond;
  }

  /** Event i's intended time, Proc.now() ns. */
  public long due(long i) {
    return start + Math.round(i * intervalNs);
  }

  /**
   * Blocks until Proc.now() >= due: parks until SPIN_NS before it, then spins. A virtual thread
   * spins with Thread.yield(), which hands its carrier to the other virtual threads (one carrier
   * may run this sender's reader too); a platform thread with Thread.onSpinWait().
   */
  public static void waitUntil(long due) throws InterruptedException {
    boolean virtual = Thread.currentThread().isVirtual();
    for (long rest = due - Proc.now(); rest > 0; rest = due - Proc.now()) {
      if (rest > SPIN_NS) {
        LockSupport.parkNanos(rest - SPIN_NS);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      } else if (virtual) {
        Thread.yield();
      } else {
        Thread.onSpinWait();
      }
    }
  }
}
