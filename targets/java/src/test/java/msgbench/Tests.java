package msgbench;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.Worker;
import msgbench.kit.WorkerError;

/**
 * The java target's unit tests: every static method named test* of the classes below, in one JVM.
 * Ends on the plain line "N passed, N failed".
 */
public final class Tests {
  private Tests() {}

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  static void equal(Object got, Object want, String what) {
    if (!java.util.Objects.equals(got, want)) {
      throw new AssertionError(what + ": got " + got + ", want " + want);
    }
  }

  static Request request(String workload, String options, String params) throws WorkerError {
    return Request.parse(
        "{\"workload\":\""
            + workload
            + "\",\"variant\":\"test\",\"options\":"
            + options
            + ",\"params\":"
            + params
            + ",\"repetition\":1,\"warmup\":false}");
  }

  /** Runs req as the worker would, without the protocol lines. */
  static Wire.Result serve(Request req) throws WorkerError, InterruptedException {
    return Worker.measure(Main.TARGET, req);
  }

  /** As serve, with the sample lines (of the workloads Main samples) on out. */
  static Wire.Result serveSampled(Request req, Wire out) throws WorkerError, InterruptedException {
    return Worker.serve(Main.TARGET, req, out);
  }

  static void expectError(String kind, String part, ThrowingRunnable r) throws Exception {
    try {
      r.run();
    } catch (WorkerError e) {
      check(
          e.kind.equals(kind) && e.getMessage().contains(part),
          "error " + e.kind + ": " + e.getMessage() + "; want " + kind + " containing " + part);
      return;
    }
    throw new AssertionError("no error; want " + kind + " containing " + part);
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    List<Class<?>> suites =
        List.of(
            WorkerTests.class,
            RingTests.class,
            FaninTests.class,
            SocketTests.class,
            SocketOpenLoopTests.class,
            ChatTests.class,
            ChatServerTests.class);
    int passed = 0;
    int failed = 0;
    List<String> failures = new ArrayList<>();
    for (Class<?> suite : suites) {
      for (Method m : suite.getDeclaredMethods()) {
        if (!m.getName().startsWith("test") || !Modifier.isStatic(m.getModifiers())) {
          continue;
        }
        String name = suite.getSimpleName() + "." + m.getName();
        long t0 = System.nanoTime();
        try {
          m.invoke(null);
          passed++;
          System.out.printf("ok   %s (%d ms)%n", name, (System.nanoTime() - t0) / 1_000_000);
        } catch (java.lang.reflect.InvocationTargetException e) {
          failed++;
          failures.add(name + ": " + e.getCause());
          System.out.println("FAIL " + name + ": " + e.getCause());
          e.getCause().printStackTrace(System.out);
        }
      }
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
