package msgbench;

import static msgbench.Tests.check;
import static msgbench.Tests.equal;
import static msgbench.Tests.request;

import msgbench.kit.Histogram;
import msgbench.kit.Wire;

final class ChatTests {
  private ChatTests() {}

  /** The vectors of tests/test_histogram.py (msgbench/histogram.py). */
  static void testHistogramLayoutVectors() {
    long[][] vectors = {
      {0, 0},
      {1, 1},
      {127, 127},
      {128, 128},
      {129, 128},
      {255, 191},
      {256, 192},
      {1000, 317},
      {65535, 703},
      {1_000_000, 954},
      {1_000_000_000, 1591},
      {1L << 40, 2240},
      {1L << 62, 3648}
    };
    for (long[] v : vectors) {
      equal((long) Histogram.index(v[0]), v[1], "index(" + v[0] + ")");
    }
    equal(Histogram.index(-5), 0, "negative");
    equal(Histogram.LARGEST, 3711, "largest");
  }

  static void testHistogramCountsAndMerges() {
    Histogram a = new Histogram();
    Histogram b = new Histogram();
    a.record(5);
    a.record(5);
    a.record(1000);
    b.record(Long.MAX_VALUE);
    a.merge(b);
    equal(a.count(), 4L, "count");
    equal(a.max(), Long.MAX_VALUE, "max");
    long[][] s = a.sparse();
    equal(s.length, 3, "pairs");
    equal(s[0][0] + "/" + s[0][1], "5/2", "first");
    equal(s[1][0] + "/" + s[1][1], "317/1", "second");
    equal(s[2][0] + "/" + s[2][1], "3711/1", "third");
  }

  static String params(double seconds, int think, int delay, String message) {
    return "{\"groups\":3,\"clients_per_group\":4,\"duration_s\":"
        + seconds
        + ",\"think_ms\":"
        + think
        + ",\"listener_delay_ms\":"
        + delay
        + ",\"message\":\""
        + message
        + "\",\"history\":10,\"drain_timeout_s\":10}";
  }

  static void testEveryMessageDeliveredInItsGroup() throws Exception {
    for (String model : new String[] {"threads", "virtual", "pekko"}) {
      for (String p :
          new String[] {
            params(0.2, 0, 0, "text"), params(0.2, 0, 1, "binary"), params(0.3, 50, 0, "text")
          }) {
        Wire.Result r = Tests.serve(request("chat", "{\"model\":\"" + model + "\"}", p));
        String what = model + " " + p;
        long sent = r.verify.get("sent");
        check(sent > 0, what + " sent");
        equal(r.verify.get("received"), sent, what + " received");
        equal(r.verify.get("cross_group"), 0L, what);
        equal(r.verify.get("self_deliveries"), 0L, what);
        equal(r.verify.get("users"), 12L, what);
        equal(r.measured.get("processes_count"), 27L, what);
        long counted = 0;
        for (long[] pair : r.histograms.get("latency_ns")) {
          counted += pair[1];
        }
        equal(counted, sent, what + " latencies");
      }
    }
  }

  static void testVirtualYield() throws Exception {
    Wire.Result r =
        Tests.serve(
            request("chat", "{\"model\":\"virtual\",\"yield\":true}", params(0.2, 0, 0, "text")));
    check(r.verify.get("sent") > 0, "sent");
    equal(r.verify.get("received"), r.verify.get("sent"), "received");
  }

  static void testRealisticSendsOncePerThinkTime() throws Exception {
    Wire.Result r = Tests.serve(request("chat", "{}", params(0.5, 100, 0, "text")));
    long sent = r.verify.get("sent");
    check(sent >= 12 * 4 && sent <= 12 * 5, "sent " + sent + " of 12 users x 0.5 s / 100 ms");
  }
}
