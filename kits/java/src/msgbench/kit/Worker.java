package msgbench.kit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One run of a Java worker (spec/README.md): the request line on stdin; on stdout the hello line,
 * then one result or one error line. A worker's main names its target and workloads and calls
 * {@link #main}; everything else of the protocol is here.
 */
public final class Worker {
  /** A workload: the request in, raw facts out. */
  public interface Workload {
    Wire.Result measure(Request req) throws WorkerError, InterruptedException;
  }

  private Worker() {}

  /**
   * Serves the request on stdin and exits. The workloads named in sampled write sample lines
   * (Sampler) from a thread of their own while they run; the others stay unperturbed.
   */
  public static void main(String target, Map<String, Workload> workloads, Set<String> sampled) {
    Wire out = Wire.stdout();
    Request req;
    try {
      req = readRequest(System.in);
    } catch (WorkerError e) {
      out.hello(target, runtimeVersion(), "unknown");
      out.error(e);
      System.exit(0);
      return;
    }
    out.hello(target, runtimeVersion(), req.variant.isEmpty() ? "unknown" : req.variant);
    try {
      out.result(serve(target, workloads, sampled, req, out));
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
    // Daemon threads, actors and executors may still stand: the reply is out, so end here.
    System.exit(0);
  }

  /** The one request line of in; an internal error when there is none or it is not a request. */
  public static Request readRequest(InputStream in) throws WorkerError {
    String line;
    try {
      line = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
    } catch (IOException e) {
      throw WorkerError.internal("cannot read the request: " + e.getMessage());
    }
    if (line == null || line.isBlank()) {
      throw WorkerError.internal("no request on stdin");
    }
    return Request.parse(line);
  }

  /**
   * Runs the request's workload (unsupported when target does not implement it), after the
   * request's option warmup_iterations of in-process runs (untimed, unreported), so the measured
   * run may meet JIT-compiled code.
   */
  public static Wire.Result measure(String target, Map<String, Workload> workloads, Request req)
      throws WorkerError, InterruptedException {
    Workload w = workloads.get(req.workload);
    if (w == null) {
      throw WorkerError.unsupported(
          "workload \""
              + req.workload
              + "\" is not implemented by "
              + target
              + " (implemented: "
              + String.join(", ", new TreeSet<>(workloads.keySet()))
              + ")");
    }
    long warmups = req.longOption("warmup_iterations", 0);
    for (long i = 0; i < warmups; i++) {
      w.measure(req);
    }
    return w.measure(req);
  }

  /** As measure, with sample lines on out while it runs when sampled names the workload. */
  public static Wire.Result serve(
      String target, Map<String, Workload> workloads, Set<String> sampled, Request req, Wire out)
      throws WorkerError, InterruptedException {
    if (!sampled.contains(req.workload)) {
      return measure(target, workloads, req);
    }
    Sampler sampler = Sampler.start(out);
    try {
      return measure(target, workloads, req);
    } finally {
      sampler.stop();
    }
  }

  /** The JVM the worker runs on, for the hello line and --version. */
  public static String runtimeVersion() {
    return "OpenJDK "
        + Runtime.version()
        + " ("
        + System.getProperty("java.vm.name")
        + ", "
        + System.getProperty("java.vendor")
        + ")";
  }
}
