package msgbench;

import static msgbench.Tests.equal;
import static msgbench.Tests.request;

import msgbench.kit.Wire;

final class RingTests {
  private RingTests() {}

  static void testEveryHopCounted() throws Exception {
    for (String model : new String[] {"threads", "virtual"}) {
      for (long[] nm : new long[][] {{2, 1}, {3, 5}, {100, 7}}) {
        Wire.Result r =
            Tests.serve(
                request(
                    "ring",
                    "{\"model\":\"" + model + "\"}",
                    "{\"n\":" + nm[0] + ",\"m\":" + nm[1] + ",\"payload\":\"BOO!\"}"));
        String what = model + "/n=" + nm[0] + "/m=" + nm[1];
        equal(r.verify.get("hops"), nm[0] * nm[1], what + " hops");
        equal(r.verify.get("laps"), nm[1], what + " laps");
        equal(r.verify.get("links"), nm[0], what + " links");
        equal(
            r.measured.keySet().toString(),
            "[create_wall_ns, create_cpu_ns, pass_wall_ns, pass_cpu_ns, peak_rss_bytes]",
            what);
      }
    }
  }

  static void testPekkoRing() throws Exception {
    for (long[] nm : new long[][] {{2, 1}, {50, 4}}) {
      Wire.Result r =
          Tests.serve(
              request(
                  "ring",
                  "{\"model\":\"pekko\"}",
                  "{\"n\":" + nm[0] + ",\"m\":" + nm[1] + ",\"payload\":\"BOO!\"}"));
      equal(r.verify.get("hops"), nm[0] * nm[1], "hops");
      equal(r.verify.get("laps"), nm[1], "laps");
      equal(r.verify.get("links"), nm[0], "links");
    }
  }

  static void testWarmupIterations() throws Exception {
    Wire.Result r =
        Tests.serve(
            request("ring", "{\"warmup_iterations\":2}", "{\"n\":10,\"m\":3,\"payload\":\"\"}"));
    equal(r.verify.get("hops"), 30L, "hops of the measured run only");
  }
}
