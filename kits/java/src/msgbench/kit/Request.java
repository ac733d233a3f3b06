package msgbench.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Set;

/** The one request line (spec/request.schema.json): the harness checked every parameter. */
public final class Request {
  public final String workload;
  public final String variant;
  public final JsonNode options;
  public final JsonNode params;
  public final String line;

  private Request(JsonNode node, String line) {
    this.workload = node.path("workload").asText("");
    this.variant = node.path("variant").asText("");
    this.options = node.path("options");
    this.params = node.path("params");
    this.line = line;
  }

  public static Request parse(String line) throws WorkerError {
    return new Request(Wire.parse(line), line);
  }

  public long longParam(String name) throws WorkerError {
    JsonNode v = params.get(name);
    if (v == null || !v.isNumber()) {
      throw WorkerError.internal("params." + name + " is missing or not a number");
    }
    return v.asLong();
  }

  public double doubleParam(String name) throws WorkerError {
    JsonNode v = params.get(name);
    if (v == null || !v.isNumber()) {
      throw WorkerError.internal("params." + name + " is missing or not a number");
    }
    return v.asDouble();
  }

  public String stringParam(String name) throws WorkerError {
    JsonNode v = params.get(name);
    if (v == null || !v.isTextual()) {
      throw WorkerError.internal("params." + name + " is missing or not a string");
    }
    return v.asText();
  }

  /**
   * Fails naming the first option key that is not in known: an ignored option would measure
   * something else.
   */
  public void onlyOptions(Set<String> known) throws WorkerError {
    for (Iterator<String> it = options.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!known.contains(key)) {
        throw WorkerError.internal(
            "unknown option "
                + key
                + " (known here: "
                + String.join(", ", new java.util.TreeSet<>(known))
                + ")");
      }
    }
  }

  public String stringOption(String name, String fallback) throws WorkerError {
    JsonNode v = options.get(name);
    if (v == null) {
      return fallback;
    }
    if (!v.isTextual()) {
      throw WorkerError.internal("option " + name + " must be a string, not " + v);
    }
    return v.asText();
  }

  public boolean booleanOption(String name, boolean fallback) throws WorkerError {
    JsonNode v = options.get(name);
    if (v == null) {
      return fallback;
    }
    if (!v.isBoolean()) {
      throw WorkerError.internal("option " + name + " must be true or false, not " + v);
    }
    return v.asBoolean();
  }

  public long longOption(String name, long fallback) throws WorkerError {
    JsonNode v = options.get(name);
    if (v == null) {
      return fallback;
    }
    if (!v.canConvertToExactIntegral() || !v.canConvertToLong() || v.asLong() < 0) {
      throw WorkerError.internal("option " + name + " must be a whole number >= 0, not " + v);
    }
    return v.asLong();
  }
}
