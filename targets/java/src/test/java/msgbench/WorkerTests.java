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
}
