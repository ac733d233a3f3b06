package msgbench;

import static msgbench.Tests.check;
import static msgbench.Tests.equal;
import static msgbench.Tests.request;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import msgbench.kit.Histogram;
import msgbench.kit.Pacer;
import msgbench.kit.Proc;
import msgbench.kit.Wire;

/** Socket echo in open loop (rate > 0): the pacer, and latency from each message's due time. */
final class SocketOpenLoopTests {
  private SocketOpenLoopTests() {}

  static String params(int size, long total, int sockets, double rate) {
    return SocketTests.params("echo", size, total, sockets).replace("}", ",\"rate\":" + rate + "}");
  }

  static void testPacerSpacesEventsEvenly() throws Exception {
    Pacer pacer = new Pacer(1_000, 3); // a third of a second apart, rounded to the ns
    equal(pacer.due(0), 1_000L, "due(0) is the start");
    equal(pacer.due(1), 1_000L + 333_333_333L, "due(1)");
    equal(pacer.due(3), 1_000L + 1_000_000_000L, "due(3): no drift from rounding");
    long t0 = Proc.now();
    Pacer fast = new Pacer(t0, 10_000); // 100 µs apart: the last spin decides
    for (int i = 0; i < 20; i++) {
      Pacer.waitUntil(fast.due(i));
      check(Proc.now() >= fast.due(i), "waitUntil returned before event " + i + " was due");
    }
    check(Proc.now() - t0 >= 1_900_000, "20 events at 10,000/s took less than 1.9 ms");
  }

  /** Every echo is counted, checked and timed once; the sequence lasts as long as its rate says. */
  static void testEveryEchoIsTimedAtItsRate() throws Exception {
    for (String model : new String[] {"threads", "virtual"}) {
      // 2 sockets of 60 messages at 3,000/s together: 1,500/s each, 40 ms a sequence at least
      Wire.Result r =
          Tests.serve(
              request("socket", "{\"model\":\"" + model + "\"}", params(100, 6000, 2, 3000)));
      String what = model + ": ";
      equal(r.verify.get("messages_sent"), 120L, what + "sent");
      equal(r.verify.get("messages_received"), 120L, what + "received");
      equal(r.verify.get("bytes_received"), 12000L, what + "bytes");
      equal(r.verify.get("content_mismatches"), 0L, what + "mismatches");
      long[][] latency = r.histograms.get("latency_ns");
      if (latency == null) {
        throw new AssertionError(what + "no latency_ns histogram");
      }
      equal(Arrays.stream(latency).mapToLong(b -> b[1]).sum(), 120L, what + "histogram count");
      long max = (Long) r.measured.get("latency_max_ns");
      check(max > 0, what + "latency_max_ns = " + max);
      check(
          Histogram.index(max) == latency[latency.length - 1][0],
          what + "latency_max_ns " + max + " is not in the histogram's last bucket");
      for (long elapsed : (long[]) r.measured.get("elapsed_ns")) {
        check(elapsed >= 59 * 1_000_000_000L / 1500, what + "paced too fast: " + elapsed + " ns");
      }
    }
  }

  /** The closed loop reports no latency: only the open loop's round trips are timed. */
  static void testClosedLoopHasNoLatency() throws Exception {
    Wire.Result r = Tests.serve(request("socket", "{}", SocketTests.params("echo", 100, 1000, 1)));
    check(r.histograms.isEmpty(), "closed loop reported " + r.histograms.keySet());
    check(!r.measured.containsKey("latency_max_ns"), "closed loop reported latency_max_ns");
  }

  /**
   * A server that takes 20 ms per echo against 1,000 offered per second: it falls behind by 19 ms a
   * message, and echo i returns about 19 * i ms after its due time, the last at least about 380 ms
   * after 20 messages, where a send-to-echo time would stay near 20 ms. A prompt server stays far
   * below that; the bound between them is wide. A machine that stops this process for half a second
   * makes a prompt server look slow, never a slow one prompt: the prompt case has three tries.
   */
  static void testSlowServerIsChargedItsBacklog() throws Exception {
    long slow = latencyMax(20_000_000, 20, 1000);
    check(slow >= 380_000_000, "a 20 ms/echo server at 1,000/s: latency max " + slow + " ns");
    long fast = latencyMax(0, 100, 1000);
    for (int tries = 1; tries < 3 && fast >= 200_000_000; tries++) {
      fast = latencyMax(0, 100, 1000);
    }
    check(fast < 200_000_000, "a prompt server at 1,000/s: latency max " + fast + " ns");
  }

  /** One socket's open loop against an echo server that sleeps delayNs before each echo. */
  static long latencyMax(long delayNs, int messages, double rate) throws Exception {
    int size = 64;
    SocketParams p =
        new SocketParams(request("socket", "{}", params(size, (long) size * messages, 1, rate)));
    byte[][] frames = SocketParams.frames(size, messages);
    try (ServerSocket listener = new ServerSocket(0, 1, null)) {
      Thread server = new Thread(() -> echoSlowly(listener, size, delayNs));
      server.setDaemon(true);
      server.start();
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", listener.getLocalPort()));
        s.setTcpNoDelay(true);
        SocketClient.Client c = new SocketClient.Client(1, s);
        c.echoPaced(p, messages, frames, p.model.threads("test-writer-"));
        equal(c.received, (long) messages, "echoes");
        equal(c.mismatches, 0L, "mismatches");
        equal(c.latency.count(), (long) messages, "timed echoes");
        return c.latency.max();
      }
    }
  }

  static void echoSlowly(ServerSocket listener, int size, long delayNs) {
    try (Socket c = listener.accept()) {
      c.setTcpNoDelay(true);
      DataInputStream in = new DataInputStream(c.getInputStream());
      OutputStream out = c.getOutputStream();
      byte[] frame = new byte[SocketParams.HEADER + size];
      while (true) {
        try {
          in.readFully(frame);
        } catch (java.io.EOFException e) {
          return;
        }
        if (delayNs > 0) {
          Thread.sleep(delayNs / 1_000_000, (int) (delayNs % 1_000_000));
        }
        out.write(frame);
      }
    } catch (IOException | InterruptedException e) {
      // the test's client has gone
    }
  }

  /** A server that hangs up mid-sequence fails the open loop at once; its writer stops. */
  static void testServerHangingUpFailsTheLoop() throws Exception {
    int size = 64;
    SocketParams p = new SocketParams(request("socket", "{}", params(size, size * 1000L, 1, 2000)));
    try (ServerSocket listener = new ServerSocket(0, 1, null)) {
      Thread server =
          new Thread(
              () -> {
                try (Socket c = listener.accept()) {
                  c.getInputStream().readNBytes(3 * (SocketParams.HEADER + size));
                } catch (IOException e) {
                  // closing is the point
                }
              });
      server.setDaemon(true);
      server.start();
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", listener.getLocalPort()));
        SocketClient.Client c = new SocketClient.Client(1, s);
        long t0 = Proc.now();
        try {
          c.echoPaced(p, 1000, SocketParams.frames(size, 1000), p.model.threads("test-writer-"));
          throw new AssertionError("the open loop ended well against a server that hung up");
        } catch (IOException e) {
          check(Proc.now() - t0 < 5_000_000_000L, "the failure took " + (Proc.now() - t0) + " ns");
        }
        equal(c.received, 0L, "echoes from a server that echoes none");
      }
    }
  }
}
