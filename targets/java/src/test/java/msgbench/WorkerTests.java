package msgbench;

import static msgbench.Tests.check;
import static msgbench.Tests.equal;
import static msgbench.Tests.expectError;
import static msgbench.Tests.request;

import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.WorkerError;

final class WorkerTests {
  private WorkerTests() {}

  static void testUnknownWorkloadIsUnsupported() throws Exception {
    expectError(
        WorkerError.UNSUPPORTED,
        "workload \"nope\" is not implemented by java",
        () -> Tests.serve(request("nope", "{}", "{}")));
  }

  static void testUnknownOptionIsNamed() throws Exception {
    expectError(
        WorkerError.INTERNAL,
        "unknown option no_such_option",
        () ->
            Tests.serve(
                request("ring", "{\"no_such_option\":1}", "{\"n\":3,\"m\":1,\"payload\":\"x\"}")));
    expectError(
        WorkerError.INTERNAL,
        "option model = \"green\"",
        () ->
            Tests.serve(
                request("ring", "{\"model\":\"green\"}", "{\"n\":3,\"m\":1,\"payload\":\"x\"}")));
  }

  static void testBadRequestLine() throws Exception {
    expectError(WorkerError.INTERNAL, "not JSON", () -> Request.parse("{nope"));
    expectError(WorkerError.INTERNAL, "not a JSON object", () -> Request.parse("[1]"));
  }

  static void testProcessFacts() throws Exception {
    check(Proc.peakRssBytes() > 1 << 20, "peak RSS");
    check(Proc.cpuNs() > 0, "cpu");
    check(Proc.availableBytes() > 0, "MemAvailable");
    equal(Proc.readLong("/nonexistent", 7), 7L, "fallback");
  }

  static void testPlatformThreadLimit() throws Exception {
    Proc.checkPlatformThreads(100);
    expectError(
        WorkerError.RESOURCE, "platform threads", () -> Proc.checkPlatformThreads(100_000_000));
  }

  /** Runs this target's launcher (make test runs in targets/java) with args; status and stderr. */
  static String[] launch(String... args) throws Exception {
    java.util.List<String> argv = new java.util.ArrayList<>(java.util.List.of("./msgbench-java"));
    argv.addAll(java.util.List.of(args));
    Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), "UTF-8");
    String err = new String(p.getErrorStream().readAllBytes(), "UTF-8");
    return new String[] {String.valueOf(p.waitFor()), out, err};
  }

  static void testCommandLine() throws Exception {
    String[] version = launch("--version");
    equal(version[0], "0", "--version status");
    check(version[1].startsWith("OpenJDK "), "--version prints the JVM: " + version[1]);
    String[] unknown = launch("--nope", "x");
    equal(unknown[0], "2", "unknown argument status");
    check(
        unknown[2].contains("unknown arguments --nope x")
            && unknown[2].contains("--version, or one of --chat-server, --serve"),
        "names the value and what is accepted: " + unknown[2]);
    String[] serve = launch("--serve", "x");
    equal(serve[0], "2", "--serve with arguments");
    check(serve[2].contains("unexpected arguments x"), serve[2]);
  }
}
