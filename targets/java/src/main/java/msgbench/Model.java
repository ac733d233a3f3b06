package msgbench;

import java.util.concurrent.ThreadFactory;
import msgbench.kit.Request;
import msgbench.kit.WorkerError;

/**
 * How a variant runs its processes (option model): platform threads, virtual threads (JDK 21+), or
 * Pekko typed actors. The threads and virtual variants share every workload's code: only the
 * ThreadFactory differs.
 */
enum Model {
  THREADS,
  VIRTUAL,
  PEKKO;

  static Model of(Request req) throws WorkerError {
    String name = req.stringOption("model", "threads");
    for (Model m : values()) {
      if (m.name().toLowerCase(java.util.Locale.ROOT).equals(name)) {
        return m;
      }
    }
    throw WorkerError.internal(
        "option model = \"" + name + "\" is not one of threads, virtual, pekko");
  }

  /** The factory of this model's threads; daemon threads, so a stuck one never holds the JVM. */
  ThreadFactory threads(String name) {
    if (this == VIRTUAL) {
      return Thread.ofVirtual().name(name, 0).factory();
    }
    return Thread.ofPlatform().name(name, 0).daemon(true).factory();
  }

  /** Whether each process is a kernel thread (the worker then checks the kernel's limits). */
  boolean platform() {
    return this == THREADS;
  }
}
