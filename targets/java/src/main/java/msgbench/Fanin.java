package msgbench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import msgbench.kit.Model;
import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/** The parallel send/receive benchmark of seed 000: N senders send to one receiver for a while. */
final class Fanin {
  static final Set<String> OPTIONS = Set.of("model", "warmup_iterations");

  static final int MESSAGE = 0;
  static final int EXIT_SIGNAL = 1;

  /** The receiver's queue is bounded at 1024 signals (README.md, "Fanin: the queue"). */
  static final int CAPACITY = 1024;

  /** A long[] of size words, its header, the signal object: bytes of one signal in flight. */
  static final long SIGNAL_OVERHEAD = 16 + 24;

  /** G1 is given room to collect: twice the live payload. */
  static final long GARBAGE_HEADROOM = 2;

  private Fanin() {}

  /**
   * What travels to the receiver: a kind and its own copy of the payload; end marks a sender's end.
   */
  record Signal(int kind, long[] words, boolean end) {}

  /** One row of the OTP suite's ProbHelpTab: cumulative probability, kind, prepared payload. */
  record Choice(double below, int kind, long[] words) {
    /** The OTP suite's pick: the first row whose cumulative probability passes draw. */
    static Choice pick(Choice[] table, double draw) {
      int last = table.length - 1;
      for (int k = 0; k < last; k++) {
        if (draw < table[k].below) {
          return table[k];
        }
      }
      return table[last];
    }
  }

  record Outcome(
      long[] sent, long[] received, long sendNs, long receiveNs, long drainNs, long cpuNs) {}

  static Wire.Result measure(Request req) throws WorkerError, InterruptedException {
    Model model = Model.of(req);
    req.onlyOptions(OPTIONS);
    int senders = (int) req.longParam("senders");
    long durationMs = req.longParam("duration_ms");
    long limitBytes = req.longParam("memory_limit_mb") << 20;
    Choice[] table = table(req.params.path("mix"));
    if (model == Model.PEKKO) {
      return report(PekkoFanin.run(senders, durationMs, table, limitBytes));
    }
    checkInFlight(senders, table, limitBytes);
    if (model.platform()) {
      Proc.checkPlatformThreads(senders + 1L);
    }
    BlockingQueue<Signal> queue = new LinkedBlockingQueue<>(CAPACITY);
    return report(run(senders, durationMs, table, queue, model.threads("fanin-")));
  }

  /** The request's mix as the table senders pick from; exit signals are refused (unsupported). */
  static Choice[] table(JsonNode mix) throws WorkerError {
    Choice[] table = new Choice[mix.size()];
    double cumulative = 0;
    for (int i = 0; i < mix.size(); i++) {
      JsonNode row = mix.get(i);
      String kind = row.path("kind").asText();
      int size = row.path("size").asInt();
      if (kind.equals("exit_signal")) {
        throw WorkerError.unsupported(
            "exit signals are an Erlang notion; java has no equivalent: a thread cannot be sent an"
                + " exit reason that it traps and survives (Thread.interrupt carries nothing), and"
                + " Pekko's death watch (Terminated, ChildFailed) only tells that an actor has"
                + " stopped, so a sender cannot signal and go on sending (mix["
                + i
                + "].kind = \"exit_signal\")");
      }
      if (!kind.equals("message")) {
        throw WorkerError.internal(
            "mix[" + i + "].kind = \"" + kind + "\" is not a kind this worker knows");
      }
      cumulative += row.path("percent").asDouble() / 100;
      long[] words = new long[size];
      for (int j = 0; j < size; j++) {
        words[j] = j + 1;
      }
      table[i] = new Choice(cumulative, MESSAGE, words);
    }
    return table;
  }

  /** Refuses a run whose bounded queue, full of the largest payload, would pass the limit. */
  static void checkInFlight(int senders, Choice[] table, long limitBytes) throws WorkerError {
    long largest = 0;
    for (Choice c : table) {
      largest = Math.max(largest, c.words.length);
    }
    long inFlight = CAPACITY + senders + 1L;
    long worst = inFlight * (largest * 8 + SIGNAL_OVERHEAD) * GARBAGE_HEADROOM;
    if (worst > limitBytes) {
      throw WorkerError.resource(
          "up to "
              + (worst >> 20)
              + " MiB of payload could be in flight ("
              + inFlight
              + " signals of up to "
              + largest
              + " words: queue capacity "
              + CAPACITY
              + ", one per sender, one at the receiver; doubled for collector headroom), more than"
              + " memory_limit_mb = "
              + (limitBytes >> 20));
    }
  }

  static Wire.Result report(Outcome out) throws WorkerError {
    Wire.Result r = new Wire.Result();
    r.measured.put("send_ns", out.sendNs);
    r.measured.put("receive_ns", out.receiveNs);
    r.measured.put("drain_ns", out.drainNs);
    r.measured.put("cpu_ns", out.cpuNs);
    r.measured.put("peak_rss_bytes", Proc.peakRssBytes());
    r.verify.put("sent_message", out.sent[MESSAGE]);
    r.verify.put("received_message", out.received[MESSAGE]);
    r.verify.put("sent_exit_signal", out.sent[EXIT_SIGNAL]);
    r.verify.put("received_exit_signal", out.received[EXIT_SIGNAL]);
    r.verify.put("receiver_alive", 1L);
    return r;
  }

  /**
   * The coordinator's clocks and the senders' counts, whatever carries the signals: shared with
   * PekkoFanin as Ring.Root is with PekkoRing.
   */
  static final class Clock {
    final AtomicLongArray sent = new AtomicLongArray(2);
    long cpu0, start, sendersStopped;

    /** The senders are ready: from a clean heap, as the OTP suite does with garbage_collect(). */
    void start() {
      System.gc();
      cpu0 = Proc.cpuNs();
      start = Proc.now();
    }

    /** A sender stopped: its counts by kind. */
    void sent(long[] mine) {
      sent.addAndGet(MESSAGE, mine[MESSAGE]);
      sent.addAndGet(EXIT_SIGNAL, mine[EXIT_SIGNAL]);
    }

    /** Every sender has reported. */
    void sendersStopped() {
      sendersStopped = Proc.now();
    }

    /** The receiver is done: received by kind, at lastReceive. */
    Outcome outcome(long[] received, long lastReceive) {
      long cpu1 = Proc.cpuNs();
      // The receiver may take the last end marker before the coordinator has every report.
      long last = Math.max(lastReceive, sendersStopped);
      return new Outcome(
          new long[] {sent.get(MESSAGE), sent.get(EXIT_SIGNAL)},
          received,
          sendersStopped - start,
          last - start,
          last - sendersStopped,
          cpu1 - cpu0);
    }
  }

  /** One measurement; the calling thread is the coordinator. */
  static Outcome run(
      int senders,
      long durationMs,
      Choice[] table,
      BlockingQueue<Signal> inbox,
      ThreadFactory threads)
      throws InterruptedException {
    Clock clock = new Clock();
    Receiver receiver = new Receiver();
    threads.newThread(() -> receiver.run(senders, inbox)).start();
    CountDownLatch ready = new CountDownLatch(senders);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch reported = new CountDownLatch(senders);
    Stop flag = new Stop();
    for (int i = 0; i < senders; i++) {
      threads
          .newThread(
              () -> {
                try {
                  ready.countDown();
                  release.await();
                  clock.sent(send(table, inbox, flag));
                  reported.countDown();
                  inbox.put(new Signal(0, null, true));
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              })
          .start();
    }
    ready.await();
    clock.start();
    release.countDown();
    Thread.sleep(durationMs);
    flag.stopped = true;
    reported.await();
    clock.sendersStopped();
    receiver.done.await();
    return clock.outcome(receiver.received, receiver.lastReceive);
  }

  /**
   * The OTP suite's do_work: pick, send (a copy of the payload), until the stop; counts by kind.
   */
  static long[] send(Choice[] table, BlockingQueue<Signal> inbox, Stop flag)
      throws InterruptedException {
    long[] mine = new long[2];
    ThreadLocalRandom rng = ThreadLocalRandom.current();
    do {
      Choice c = Choice.pick(table, rng.nextDouble());
      inbox.put(new Signal(c.kind, c.words.clone(), false)); // the receiver gets its own copy
      mine[c.kind]++;
    } while (!flag.stopped);
    return mine;
  }

  /** The OTP suite's ReceiveFun: counts what arrives until every sender's end marker is in. */
  static final class Receiver {
    final CountDownLatch done = new CountDownLatch(1);
    final long[] received = new long[2];
    long lastReceive;

    void run(int senders, BlockingQueue<Signal> inbox) {
      try {
        long[] got = new long[2];
        for (int ended = 0; ended < senders; ) {
          Signal s = inbox.take();
          if (s.end) {
            ended++;
          } else {
            got[s.kind]++;
          }
        }
        lastReceive = Proc.now();
        System.arraycopy(got, 0, received, 0, got.length);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      done.countDown();
    }
  }

  /** The stop every sender checks after each send. */
  static final class Stop {
    volatile boolean stopped;
  }
}
