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

  static Chat.Params params(int cpg) {
    Chat.Params p = new Chat.Params();
    p.groups = 1;
    p.cpg = cpg;
    return p;
  }

  static void testDrawNeverPicksTheSenderAndReachesEveryOther() {
    Chat.Params p = params(4);
    java.util.SplittableRandom rng = new java.util.SplittableRandom(7);
    for (int index = 0; index < p.cpg; index++) {
      long[] hits = new long[p.cpg];
      for (int k = 0; k < 400; k++) {
        Chat.Msg m = Chat.Msg.draw(p, rng, 2, index, 5);
        equal(m.from, index, "from");
        equal(m.group, 2, "group");
        equal(m.body, Chat.SENTENCE, "text body");
        hits[m.to]++;
      }
      for (int peer = 0; peer < p.cpg; peer++) {
        check(peer == index ? hits[peer] == 0 : hits[peer] > 50, index + " -> " + peer);
      }
    }
  }

  static void testCountsSortDeliveries() {
    Chat.Counts c = new Chat.Counts();
    long now = msgbench.kit.Proc.now();
    long future = now + 60_000_000_000L;
    c.receive(new Chat.Msg(1, 0, 0, now, Chat.SENTENCE), future, 0, 0); // in the window
    c.receive(new Chat.Msg(0, 0, 0, now, Chat.SENTENCE), future, 0, 0); // from itself
    c.receive(new Chat.Msg(1, 0, 1, now, Chat.SENTENCE), now, 0, 0); // another group, after T
    equal(c.received, 3L, "received");
    equal(c.inWindow, 2L, "in window");
    equal(c.selfDeliveries, 1L, "self");
    equal(c.crossGroup, 1L, "cross group");
    equal(c.latency.count(), 3L, "latencies");
    check(c.lastDelivery >= now, "last delivery");
  }
}
