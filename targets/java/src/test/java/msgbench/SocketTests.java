package msgbench;

import static msgbench.Tests.check;
import static msgbench.Tests.equal;
import static msgbench.Tests.expectError;
import static msgbench.Tests.request;

import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/** The socket workload end to end: the worker starts this JVM's classes as its server half. */
final class SocketTests {
  private SocketTests() {}

  static String params(String mode, int size, long total, int sockets) {
    return "{\"mode\":\""
        + mode
        + "\",\"size\":"
        + size
        + ",\"total_bytes\":"
        + total
        + ",\"sockets\":"
        + sockets
        + ",\"data\":\"binary\",\"placement\":\"local\",\"check_content\":1,\"port\":0}";
  }

  static void testEchoAndFlowCountExactly() throws Exception {
    for (String model : new String[] {"threads", "virtual"}) {
      for (String mode : new String[] {"echo", "flow"}) {
        for (int[] st :
            new int[][] {{100, 10000, 1}, {7, 100, 3}, {5000, 9999, 2}, {300000, 300000, 1}}) {
          Wire.Result r =
              Tests.serve(
                  request(
                      "socket",
                      "{\"model\":\"" + model + "\"}",
                      params(mode, st[0], st[1], st[2])));
          long n = (long) Math.max(1, st[1] / st[0]) * st[2];
          String what = model + "/" + mode + "/size=" + st[0] + "/sockets=" + st[2];
          equal(r.verify.get("messages_sent"), n, what);
          equal(r.verify.get("messages_received"), n, what);
          equal(r.verify.get("bytes_sent"), n * st[0], what);
          equal(r.verify.get("bytes_received"), n * st[0], what);
          equal(r.verify.get("content_mismatches"), 0L, what);
          equal(((long[]) r.measured.get("elapsed_ns")).length, st[2], what);
          check((Long) r.measured.get("wall_ns") > 0, what);
        }
      }
    }
  }

  static void testFramesChangeFromMessageToMessage() {
    equal(SocketParams.frameCount(16, 262144), 251, "small frames");
    equal(SocketParams.frameCount(64 << 20, 256), 2, "huge frames");
    equal(SocketParams.frameCount(10, 1), 1, "one message");
    byte[][] f = SocketParams.frames(5, 600);
    for (int i = 1; i < 600; i++) {
      byte[] a = f[(i - 1) % f.length];
      byte[] b = f[i % f.length];
      check(a[4] != b[4], "frames " + (i - 1) + " and " + i);
      equal((int) b[3], 5, "header");
    }
  }

  static void testListDataIsUnsupported() throws Exception {
    expectError(
        WorkerError.UNSUPPORTED,
        "data = \"list\" is an Erlang notion",
        () ->
            Tests.serve(
                request(
                    "socket", "{}", params("echo", 10, 100, 1).replace("\"binary\"", "\"list\""))));
  }

  static void testPortInUseIsAResourceError() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0)) {
      int port = taken.getLocalPort();
      expectError(
          WorkerError.RESOURCE,
          "port " + port + " is in use",
          () ->
              Tests.serve(
                  request(
                      "socket",
                      "{}",
                      params("echo", 10, 100, 1).replace("\"port\":0", "\"port\":" + port))));
    }
  }
}
