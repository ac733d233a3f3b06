package msgbench.kit;

import java.util.concurrent.ThreadFactory;

/**
 * How a variant runs its processes (option model): platform threads, virtual threads (JDK 21+), or
 * Pekko typed actors. The threads and virtual variants share every workload's code: only the
 * ThreadFactory differs. In the kit because every workload of a Java worker reads it the same way.
 */
public enum Model {
  THREADS,
  VIRTUAL,
  PEKKO;

  public static Model of(Request req) throws WorkerError {
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
  public ThreadFactory threads(String name) {
    if (this == VIRTUAL) {
      return Thread.ofVirtual().name(name, 0).factory();
    }
    return Thread.ofPlatform().name(name, 0).daemon(true).factory();
  }

  /** Whether each process is a kernel thread (the worker then checks the kernel's limits). */
  public boolean platform() {
    return this == THREADS;
  }
}
