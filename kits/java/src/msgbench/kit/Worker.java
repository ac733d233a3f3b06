package msgbench.kit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One run of a Java worker (spec/README.md): the request line on stdin; on stdout the hello line,
 * then one result or one error line. A worker's main describes its target ({@link Target}) and
 * calls {@link #main}; everything else of the protocol and of the command line is here.
 */
public final class Worker {
  /** A workload: the request in, raw facts out. */
  public interface Workload {
    Wire.Result measure(Request req) throws WorkerError, InterruptedException;
  }

  /** A command-line mode beside the worker's (a server half, say): its arguments in, status out. */
  public interface Mode {
    int run(String[] args) throws Exception;
  }

  /**
   * What a target's worker implements: its name (the hello line's), its workloads, those that write
   * sample lines (Sampler, from a thread of their own, while they run; the others stay
   * unperturbed), and its other modes by their flag (e.g. --serve).
   */
  public record Target(
      String name, Map<String, Workload> workloads, Set<String> sampled, Map<String, Mode> modes) {}

  private Worker() {}

  /**
   * The worker's command line: without arguments it serves the request on stdin; --version prints
   * the JVM; a mode's flag runs that mode with the arguments after it. Then exits.
   */
  public static void main(Target target, String[] args) {
    if (args.length == 0) {
      serveStdin(target);
      return;
    }
    String program = "msgbench-" + target.name();
    if (args[0].equals("--version") && args.length == 1) {
      System.out.println(runtimeVersion());
      System.exit(0);
      return;
    }
    Mode mode = target.modes().get(args[0]);
    if (mode == null) {
      System.err.println(
          program
              + ": unknown arguments "
              + String.join(" ", args)
              + "; accepted: none (the request on stdin), --version, or one of "
              + String.join(", ", new TreeSet<>(target.modes().keySet()))
              + " and its arguments");
      System.exit(2);
      return;
    }
    int status;
    try {
      status = mode.run(Arrays.copyOfRange(args, 1, args.length));
    } catch (Exception e) {
      System.err.println(program + " " + args[0] + ": " + e);
      status = 1;
    }
    System.exit(status);
  }

  /** Serves the request on stdin and exits. */
  static void serveStdin(Target target) {
    Wire out = Wire.stdout();
    Request req;
    try {
      req = readRequest(System.in);
    } catch (WorkerError e) {
      out.hello(target.name(), runtimeVersion(), "unknown");
      out.error(e);
      System.exit(0);
      return;
    }
    out.hello(target.name(), runtimeVersion(), req.variant.isEmpty() ? "unknown" : req.variant);
    try {
      out.result(serve(target, req, out));
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
  public static Wire.Result measure(Target target, Request req)
      throws WorkerError, InterruptedException {
    Workload w = target.workloads().get(req.workload);
    if (w == null) {
      throw WorkerError.unsupported(
          "workload \""
              + req.workload
              + "\" is not implemented by "
              + target.name()
              + " (implemented: "
              + String.join(", ", new TreeSet<>(target.workloads().keySet()))
              + ")");
    }
    long warmups = req.longOption("warmup_iterations", 0);
    for (long i = 0; i < warmups; i++) {
      w.measure(req);
    }
    return w.measure(req);
  }

  /** As measure, with sample lines on out while it runs when the target samples the workload. */
  public static Wire.Result serve(Target target, Request req, Wire out)
      throws WorkerError, InterruptedException {
    if (!target.sampled().contains(req.workload)) {
      return measure(target, req);
    }
    Sampler sampler = Sampler.start(out);
    try {
      return measure(target, req);
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
