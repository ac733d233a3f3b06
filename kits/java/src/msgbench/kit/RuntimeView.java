package msgbench.kit;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The process's view of itself over time (docs/chat-server.md, "Stats"; the worker's sample lines):
 * RSS and its peak from /proc/self/status, CPU, and the JVM's own view through its management
 * beans: heap and non-heap, GC counts and time (all collectors), live platform threads. Each call
 * reads a few beans and one small file: cheap enough for once a second.
 */
public final class RuntimeView {
  private RuntimeView() {}

  /** VmRSS and VmHWM in bytes, read together so that the peak is never below the current. */
  public static long[] rssAndPeakBytes() {
    long rss = 0;
    long peak = 0;
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          rss = kib(line) * 1024;
        } else if (line.startsWith("VmHWM:")) {
          peak = kib(line) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return new long[] {0, 0};
    }
    return new long[] {rss, peak};
  }

  private static long kib(String line) {
    return Long.parseLong(line.substring(line.indexOf(':') + 1).trim().split("\\s+")[0]);
  }

  /** The JVM's memory, GC and thread counts; names carry their unit. */
  public static Map<String, Long> jvm() {
    Map<String, Long> view = new LinkedHashMap<>();
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    MemoryUsage heap = memory.getHeapMemoryUsage();
    MemoryUsage nonHeap = memory.getNonHeapMemoryUsage();
    view.put("heap_used_bytes", heap.getUsed());
    view.put("heap_committed_bytes", heap.getCommitted());
    view.put("nonheap_used_bytes", nonHeap.getUsed());
    view.put("nonheap_committed_bytes", nonHeap.getCommitted());
    long gcCount = 0;
    long gcTimeMs = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      // -1: this collector does not say; it adds nothing then.
      gcCount += Math.max(0, gc.getCollectionCount());
      gcTimeMs += Math.max(0, gc.getCollectionTime());
    }
    view.put("gc_count", gcCount);
    view.put("gc_time_ms", gcTimeMs);
    view.put("platform_threads_count", (long) ManagementFactory.getThreadMXBean().getThreadCount());
    return view;
  }

  /** One sample: RSS, peak RSS, CPU and the JVM's view. */
  public static Map<String, Long> sample() {
    Map<String, Long> values = new LinkedHashMap<>();
    long[] rss = rssAndPeakBytes();
    values.put("rss_bytes", rss[0]);
    values.put("peak_rss_bytes", rss[1]);
    values.put("cpu_ns", Proc.cpuNs());
    values.putAll(jvm());
    return values;
  }
}
