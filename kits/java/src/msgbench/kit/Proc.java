package msgbench.kit;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the worker measures about its own process: clocks, CPU, memory, limits. */
public final class Proc {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private Proc() {}

  /** Monotonic clock, ns. */
  public static long now() {
    return System.nanoTime();
  }

  /** CPU time of the whole process (every thread, user and system), ns. */
  public static long cpuNs() {
    return OS.getProcessCpuTime();
  }

  /** Peak resident set size (VmHWM), bytes. */
  public static long peakRssBytes() throws WorkerError {
    return statusKiB("VmHWM:", Path.of("/proc/self/status")) * 1024;
  }

  /** MemAvailable, bytes; -1 when /proc/meminfo cannot tell. */
  public static long availableBytes() {
    try {
      return statusKiB("MemAvailable:", Path.of("/proc/meminfo")) * 1024;
    } catch (WorkerError e) {
      return -1;
    }
  }

  /** The JVM's own view of its memory: heap and non-heap committed, bytes. */
  public static long runtimeMemoryBytes() {
    MemoryMXBean m = ManagementFactory.getMemoryMXBean();
    return m.getHeapMemoryUsage().getCommitted() + m.getNonHeapMemoryUsage().getCommitted();
  }

  private static long statusKiB(String key, Path file) throws WorkerError {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(key)) {
          return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      throw WorkerError.internal("cannot read " + key + " from " + file + ": " + e);
    }
    throw WorkerError.internal(file + " has no " + key);
  }

  public static long readLong(String file, long fallback) {
    try {
      return Long.parseLong(Files.readAllLines(Path.of(file)).get(0).trim());
    } catch (IOException | RuntimeException e) {
      return fallback;
    }
  }

  /**
   * Platform threads: each is a kernel thread (kernel.threads-max) with a stack mapped apart (a few
   * memory maps each, vm.max_map_count). Refuses a run that needs more than both allow.
   */
  public static void checkPlatformThreads(long threads) throws WorkerError {
    checkPlatformThreads(threads, PLATFORM_THREAD_BYTES);
  }

  /** As above, for threads that weigh bytesPerThread each (measured per workload). */
  public static void checkPlatformThreads(long threads, long bytesPerThread) throws WorkerError {
    long threadsMax = readLong("/proc/sys/kernel/threads-max", Long.MAX_VALUE);
    long maps = readLong("/proc/sys/vm/max_map_count", Long.MAX_VALUE);
    long byMaps =
        maps == Long.MAX_VALUE ? Long.MAX_VALUE : (maps - MAPS_RESERVED) / MAPS_PER_THREAD;
    long limit = Math.min(threadsMax - THREADS_RESERVED, byMaps);
    if (threads > limit) {
      throw WorkerError.resource(
          threads
              + " platform threads exceed what this host allows one JVM (about "
              + limit
              + ": kernel.threads-max = "
              + threadsMax
              + ", vm.max_map_count = "
              + maps
              + " at "
              + MAPS_PER_THREAD
              + " maps per thread); use the virtual variant");
    }
    long available = availableBytes();
    if (available > 0 && threads > available / PLATFORM_THREAD_BYTES) {
      throw WorkerError.resource(
          threads
              + " platform threads need about "
              + threads * PLATFORM_THREAD_BYTES / (1 << 20)
              + " MiB at "
              + PLATFORM_THREAD_BYTES
              + " bytes each, more than the "
              + available / (1 << 20)
              + " MiB available");
    }
  }

  /**
   * Memory maps a platform thread takes: its stack, the guard pages split off it, the malloc arena
   * share.
   */
  public static final long MAPS_PER_THREAD = 2;

  /** Maps the JVM itself needs (heap, code cache, libraries, metaspace). */
  public static final long MAPS_RESERVED = 5000;

  public static final long THREADS_RESERVED = 1000;

  /** Measured peak RSS per platform thread of a large ring (README.md, "Limits"), rounded up. */
  public static final long PLATFORM_THREAD_BYTES = 64 << 10;
}
