package msgbench;

import msgbench.kit.Histogram;
import msgbench.kit.Proc;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * What the chat clients counted, summed into the result's raw facts and verify counts: one
 * reckoning for the thread-based chat (Chat) and the actor-based one (PekkoChat).
 */
final class ChatTally {
  long received;
  long inWindow;
  long crossGroup;
  long selfDeliveries;
  long lastDelivery;
  final Histogram latency = new Histogram();

  /** One client's counts. */
  void add(Chat.Counts c) {
    received += c.received;
    inWindow += c.inWindow;
    crossGroup += c.crossGroup;
    selfDeliveries += c.selfDeliveries;
    latency.merge(c.latency);
    lastDelivery = Math.max(lastDelivery, c.lastDelivery);
  }

  /** The result line: raw facts (ns, counts, bytes), verify counts and the latency histogram. */
  Wire.Result result(
      long setupNs,
      long sendWindowNs,
      long deadline,
      long processes,
      long runtimeMemory,
      long sent,
      long users)
      throws WorkerError {
    Wire.Result r = new Wire.Result();
    r.measured.put("setup_ns", setupNs);
    r.measured.put("send_window_ns", sendWindowNs);
    r.measured.put("drain_ns", Math.max(lastDelivery - deadline, 0));
    r.measured.put("received_in_window", inWindow);
    r.measured.put("processes_count", processes);
    r.measured.put("peak_rss_bytes", Proc.peakRssBytes());
    r.measured.put("runtime_memory_bytes", runtimeMemory);
    r.measured.put("latency_max_ns", latency.max());
    r.verify.put("sent", sent);
    r.verify.put("received", received);
    r.verify.put("cross_group", crossGroup);
    r.verify.put("self_deliveries", selfDeliveries);
    r.verify.put("users", users);
    r.histograms.put("latency_ns", latency.sparse());
    return r;
  }
}
