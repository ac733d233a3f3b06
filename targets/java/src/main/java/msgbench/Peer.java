package msgbench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * The socket workload's server half as the worker sees it: a process it starts and talks to by JSON
 * lines.
 */
final class Peer implements AutoCloseable {
  static final String ENV_COMMAND = "MSGBENCH_PEER_COMMAND";
  static final String ENV_CWD = "MSGBENCH_PEER_CWD";
  static final String ENV_HOST = "MSGBENCH_PEER_HOST";

  static final long LISTENING_WITHIN_S = 30;
  static final long SERVED_WITHIN_S = 30;
  static final long EXIT_WITHIN_S = 10;

  /** The end of the server's stdout. */
  private static final JsonNode END = Wire.JSON.createObjectNode().put("type", "");

  final List<String> argv;
  final String host;
  private final Process process;
  private final OutputStream stdin;
  private final BlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();

  private Peer(List<String> argv, String host, Process process) {
    this.argv = argv;
    this.host = host;
    this.process = process;
    this.stdin = process.getOutputStream();
  }

  /**
   * The server's command from the harness's environment, or this JVM with --serve when run alone.
   */
  static Peer start(SocketParams p, String requestLine) throws WorkerError {
    String command = System.getenv(ENV_COMMAND);
    String host = System.getenv(ENV_HOST);
    if (host == null || host.isEmpty()) {
      host = "127.0.0.1";
    }
    List<String> argv = new ArrayList<>();
    if (command == null || command.isEmpty()) {
      if (p.remote) {
        throw WorkerError.unsupported(
            "placement = remote needs the harness to place the server ("
                + ENV_COMMAND
                + " and "
                + ENV_HOST
                + " are not set)");
      }
      argv.add(ProcessHandle.current().info().command().orElse("java"));
      argv.add("-cp");
      argv.add(System.getProperty("java.class.path"));
      argv.add(Main.class.getName());
      argv.add("--serve");
    } else {
      try {
        JsonNode node = Wire.JSON.readTree(command);
        if (node == null || !node.isArray() || node.isEmpty()) {
          throw new IOException("not an array");
        }
        for (JsonNode a : node) {
          if (!a.isTextual()) {
            throw new IOException("not a string");
          }
          argv.add(a.asText());
        }
      } catch (IOException e) {
        throw WorkerError.internal(
            ENV_COMMAND + " = " + command + " is not a JSON array of strings naming a command");
      }
    }
    ProcessBuilder pb = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT);
    String cwd = System.getenv(ENV_CWD);
    if (cwd != null && !cwd.isEmpty()) {
      pb.directory(new java.io.File(cwd));
    }
    Process process;
    try {
      process = pb.start();
    } catch (IOException e) {
      throw WorkerError.internal("cannot start the server " + argv + ": " + e.getMessage());
    }
    Peer peer = new Peer(argv, host, process);
    Thread reader = new Thread(peer::readLines, "peer-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      peer.stdin.write((requestLine + "\n").getBytes(StandardCharsets.UTF_8));
      peer.stdin.flush();
    } catch (IOException e) {
      // the server died at once: next() says so
    }
    return peer;
  }

  private void readLines() {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode node;
        try {
          node = Wire.JSON.readTree(line);
        } catch (IOException e) {
          node = null;
        }
        if (node == null || !node.isObject() || !node.path("type").isTextual()) {
          lines.add(Wire.JSON.createObjectNode().put("type", "bad").put("text", line));
          return;
        }
        lines.add(node);
      }
    } catch (IOException e) {
      // the end of its stdout
    } finally {
      lines.add(END);
    }
  }

  /** The server's next line, which must be of type want; its error is relayed as ours. */
  JsonNode next(String want, long withinS) throws WorkerError, InterruptedException {
    JsonNode line = lines.poll(withinS, TimeUnit.SECONDS);
    if (line == null) {
      throw WorkerError.internal(
          "the server " + argv + " did not say \"" + want + "\" within " + withinS + " s");
    }
    String type = line.path("type").asText();
    if (line == END) {
      lines.add(END);
      throw WorkerError.internal(
          "the server " + argv + " exited without saying \"" + want + "\" (" + exitStatus() + ")");
    }
    if (type.equals("bad")) {
      throw WorkerError.internal(
          "the server printed a line that is not a JSON object where \""
              + want
              + "\" was due: "
              + Wire.abbreviate(line.path("text").asText()));
    }
    if (type.equals("error")) {
      throw relay(line);
    }
    if (!type.equals(want)) {
      throw WorkerError.internal("the server said \"" + type + "\" where \"" + want + "\" was due");
    }
    return line;
  }

  /** After a broken connection: the server's own error line, if it says one soon. */
  WorkerError explanation(long withinMs) throws InterruptedException {
    long end = System.nanoTime() + withinMs * 1_000_000;
    while (true) {
      JsonNode line = lines.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null || line == END) {
        return null;
      }
      if (line.path("type").asText().equals("error")) {
        return relay(line);
      }
    }
  }

  static WorkerError relay(JsonNode line) {
    String kind = line.path("kind").asText();
    if (!kind.equals(WorkerError.UNSUPPORTED) && !kind.equals(WorkerError.RESOURCE)) {
      kind = WorkerError.INTERNAL;
    }
    return new WorkerError(kind, "the server: " + line.path("message").asText());
  }

  private String exitStatus() throws InterruptedException {
    if (process.waitFor(1, TimeUnit.SECONDS)) {
      return "exit status " + process.exitValue();
    }
    return "still running";
  }

  /** Waits for the server to exit after serving. */
  void awaitExit() throws WorkerError, InterruptedException {
    if (!process.waitFor(EXIT_WITHIN_S, TimeUnit.SECONDS)) {
      throw WorkerError.internal(
          "the server " + argv + " did not exit within " + EXIT_WITHIN_S + " s of serving");
    }
    if (process.exitValue() != 0) {
      throw WorkerError.internal(
          "the server " + argv + " ended badly after serving: exit status " + process.exitValue());
    }
  }

  /** Closes its stdin (the server then stops), waits, and kills it if it does not. */
  @Override
  public void close() {
    try {
      stdin.close();
    } catch (IOException e) {
      // already gone
    }
    try {
      if (!process.waitFor(EXIT_WITHIN_S, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(EXIT_WITHIN_S, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
