package msgbench.kit;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Writes a sample line (RuntimeView.sample) about once a second from a thread of its own, never
 * from the measured code: the first at start, the last when stopped (after the drain).
 */
public final class Sampler {
  public static final long PERIOD_MS = 1000;

  private final Wire out;
  private final long startNs = System.nanoTime();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread;

  private Sampler(Wire out) {
    this.out = out;
    this.thread =
        Thread.ofPlatform()
            .daemon()
            .name("msgbench-sampler")
            .unstarted(
                () -> {
                  try {
                    do {
                      emit();
                    } while (!stop.await(PERIOD_MS, TimeUnit.MILLISECONDS));
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
  }

  public static Sampler start(Wire out) {
    Sampler s = new Sampler(out);
    s.thread.start();
    return s;
  }

  /** Stops the thread, then takes the last sample. */
  public void stop() throws InterruptedException {
    stop.countDown();
    thread.join();
    emit();
  }

  private void emit() {
    out.sample((System.nanoTime() - startNs) / 1_000_000.0, RuntimeView.sample());
  }
}
