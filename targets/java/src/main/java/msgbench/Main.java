package msgbench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * The msgbench worker (spec/README.md): one request on stdin, hello and one result or error on
 * stdout. With --serve it is the socket workload's server half; with --chat-server the chat server
 * kind's server (ChatServer); with --version it prints the JVM.
 */
public final class Main {
  static final String TARGET = "java";

  /** A workload: the request in, raw facts out. */
  interface Workload {
    Wire.Result measure(Request req, Model model) throws WorkerError, InterruptedException;
  }

  static final Map<String, Workload> WORKLOADS =
      new TreeMap<>(
          Map.of(
              "ring", Ring::measure,
              "fanin", Fanin::measure,
              "chat", Chat::measure,
              "socket", SocketClient::measure));

  private Main() {}

  public static void main(String[] args) throws IOException {
    if (args.length == 1 && args[0].equals("--version")) {
      System.out.println(runtimeVersion());
      return;
    }
    if (args.length == 1 && args[0].equals("--serve")) {
      SocketServer.serveStdio();
      System.exit(0);
    }
    if (args.length >= 1 && args[0].equals("--chat-server")) {
      System.exit(ChatServer.run(java.util.Arrays.copyOfRange(args, 1, args.length)));
    }
    if (args.length != 0) {
      System.err.println(
          "usage: msgbench-java [--serve | --version | --chat-server --listen HOST:PORT]"
              + " < request.json");
      System.exit(2);
    }
    Wire out = Wire.stdout();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line = in.readLine();
    Request req = null;
    WorkerError bad = null;
    try {
      if (line == null || line.isBlank()) {
        throw WorkerError.internal("no request on stdin");
      }
      req = Request.parse(line);
    } catch (WorkerError e) {
      bad = e;
    }
    String variant = req == null || req.variant.isEmpty() ? "unknown" : req.variant;
    out.hello(TARGET, runtimeVersion(), variant);
    if (bad != null) {
      out.error(bad);
    } else {
      try {
        out.result(serveSampled(req, out));
      } catch (WorkerError e) {
        out.error(e);
      } catch (InterruptedException e) {
        out.error(WorkerError.internal("interrupted"));
      } catch (OutOfMemoryError e) {
        out.error(WorkerError.resource("the JVM ran out of memory: " + e.getMessage()));
      } catch (RuntimeException | StackOverflowError e) {
        out.error(WorkerError.internal("a bug: " + e));
        e.printStackTrace();
      }
    }
    // Daemon threads, actors and executors may still stand: the reply is out, so end here.
    System.exit(0);
  }

  static String runtimeVersion() {
    return "OpenJDK "
        + Runtime.version()
        + " ("
        + System.getProperty("java.vm.name")
        + ", "
        + System.getProperty("java.vendor")
        + ")";
  }

  /** chat: with sample lines (Sampler) from a thread of their own while it runs. */
  static Wire.Result serveSampled(Request req, Wire out) throws WorkerError, InterruptedException {
    if (!req.workload.equals("chat")) {
      return serve(req);
    }
    Sampler sampler = Sampler.start(out);
    try {
      return serve(req);
    } finally {
      sampler.stop();
    }
  }

  /**
   * Runs the workload: warmup_iterations in-process runs first (untimed, unreported), so the
   * measured run meets a JIT-compiled worker; then the measured run.
   */
  static Wire.Result serve(Request req) throws WorkerError, InterruptedException {
    Workload w = WORKLOADS.get(req.workload);
    if (w == null) {
      throw WorkerError.unsupported(
          "workload \""
              + req.workload
              + "\" is not implemented by "
              + TARGET
              + " (implemented: "
              + String.join(", ", WORKLOADS.keySet())
              + ")");
    }
    Model model = Model.of(req);
    long warmups = req.longOption("warmup_iterations", 0);
    for (long i = 0; i < warmups; i++) {
      w.measure(req, model);
    }
    return w.measure(req, model);
  }
}
