package msgbench;

import static msgbench.Tests.check;
import static msgbench.Tests.equal;
import static msgbench.Tests.expectError;
import static msgbench.Tests.request;

import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

final class FaninTests {
  private FaninTests() {}

  static String params(int senders, String mix, long limitMb) {
    return "{\"senders\":"
        + senders
        + ",\"duration_ms\":50,\"mix\":"
        + mix
        + ",\"method\":\"msgbench\",\"memory_limit_mb\":"
        + limitMb
        + "}";
  }

  static void testEverySignalReceived() throws Exception {
    String mix =
        "[{\"percent\":50,\"kind\":\"message\",\"size\":1},{\"percent\":50,\"kind\":\"message\",\"size\":100}]";
    for (String model : new String[] {"threads", "virtual"}) {
      Wire.Result r =
          Tests.serve(request("fanin", "{\"model\":\"" + model + "\"}", params(3, mix, 8192)));
      long sent = r.verify.get("sent_message");
      check(sent > 0, "sent");
      equal(r.verify.get("received_message"), sent, model + " received");
      equal(r.verify.get("receiver_alive"), 1L, "alive");
      long send = (Long) r.measured.get("send_ns");
      long receive = (Long) r.measured.get("receive_ns");
      check(send >= 50_000_000L && receive >= send, "times " + r.measured);
      equal(r.measured.get("drain_ns"), receive - send, "drain");
    }
  }

  static void testExitSignalsAreUnsupported() throws Exception {
    expectError(
        WorkerError.UNSUPPORTED,
        "exit signals are an Erlang notion",
        () ->
            Tests.serve(
                request(
                    "fanin",
                    "{}",
                    params(
                        1,
                        "[{\"percent\":50,\"kind\":\"message\",\"size\":1},{\"percent\":50,\"kind\":\"exit_signal\",\"size\":1}]",
                        8192))));
  }

  static void testPekko() throws Exception {
    String mix =
        "[{\"percent\":50,\"kind\":\"message\",\"size\":1},{\"percent\":50,\"kind\":\"message\",\"size\":10}]";
    Wire.Result r = Tests.serve(request("fanin", "{\"model\":\"pekko\"}", params(3, mix, 8192)));
    long sent = r.verify.get("sent_message");
    check(sent > 0, "sent");
    equal(r.verify.get("received_message"), sent, "received");
  }

  static void testMemoryLimit() throws Exception {
    expectError(
        WorkerError.RESOURCE,
        "more than memory_limit_mb = 64",
        () ->
            Tests.serve(
                request(
                    "fanin",
                    "{}",
                    params(1, "[{\"percent\":100,\"kind\":\"message\",\"size\":1000000}]", 64))));
  }

  static void testPickFollowsTheCumulativeTable() throws Exception {
    String mix =
        "[{\"percent\":25,\"kind\":\"message\",\"size\":1},"
            + "{\"percent\":75,\"kind\":\"message\",\"size\":3}]";
    Fanin.Choice[] table =
        Fanin.table(request("fanin", "{}", params(1, mix, 1)).params.path("mix"));
    equal(table.length, 2, "rows");
    equal(table[1].below(), 1.0, "cumulative");
    equal(Fanin.Choice.pick(table, 0.0), table[0], "draw 0");
    equal(Fanin.Choice.pick(table, 0.2499), table[0], "draw below 25%");
    equal(Fanin.Choice.pick(table, 0.25), table[1], "draw at 25%");
    equal(Fanin.Choice.pick(table, 0.9999), table[1], "draw near 1");
    equal(table[1].words().length, 3, "payload words");
  }
}
