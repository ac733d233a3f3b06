package msgbench.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** The JSON lines of the worker protocol (spec/README.md), written with Jackson. */
public final class Wire {
  public static final ObjectMapper JSON = new ObjectMapper();

  private final PrintStream out;

  public Wire(PrintStream out) {
    this.out = out;
  }

  /** Standard output as the protocol's stream: UTF-8, one flush per line. */
  public static Wire stdout() {
    return new Wire(
        new PrintStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out),
            false,
            StandardCharsets.UTF_8));
  }

  public synchronized void line(ObjectNode node) {
    try {
      out.print(JSON.writeValueAsString(node));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    out.print('\n');
    out.flush();
  }

  public void hello(String target, String runtimeVersion, String variant) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "hello")
        .put("target", target)
        .put("runtime_version", runtimeVersion)
        .put("variant", variant);
    line(n);
  }

  public void error(WorkerError e) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "error").put("kind", e.kind).put("message", String.valueOf(e.getMessage()));
    line(n);
  }

  public void listening(int port) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "listening").put("port", port);
    line(n);
  }

  public void served(long messages, long bytes) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "served").put("messages", messages).put("bytes", bytes);
    line(n);
  }

  /** A progress line: done of total units of work (the harness shows it; optional). */
  public void progress(long done, long total) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "progress").put("done", done).put("total", total);
    line(n);
  }

  /** A sample line: the process's own view at t_ms (ms since the measurement started). */
  public void sample(double tMs, Map<String, ? extends Number> values) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "sample").put("t_ms", tMs);
    n.set("values", JSON.valueToTree(values));
    line(n);
  }

  public void result(Result r) {
    ObjectNode n = JSON.createObjectNode();
    n.put("type", "result");
    n.set("measured", JSON.valueToTree(r.measured));
    n.set("verify", JSON.valueToTree(r.verify));
    if (!r.histograms.isEmpty()) {
      n.set("histograms", JSON.valueToTree(r.histograms));
    }
    line(n);
  }

  /** Parses one JSON object; an internal error when it is not one. */
  public static JsonNode parse(String text) throws WorkerError {
    try {
      JsonNode node = JSON.readTree(text);
      if (node == null || !node.isObject()) {
        throw WorkerError.internal("the request is not a JSON object: " + abbreviate(text));
      }
      return node;
    } catch (IOException e) {
      throw WorkerError.internal(
          "the request is not JSON (" + e.getMessage() + "): " + abbreviate(text));
    }
  }

  public static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }

  /** What a workload reports: raw facts, verify counts, sparse histograms. */
  public static final class Result {
    public final Map<String, Object> measured = new java.util.LinkedHashMap<>();
    public final Map<String, Long> verify = new java.util.LinkedHashMap<>();
    public final Map<String, long[][]> histograms = new java.util.LinkedHashMap<>();
  }
}
