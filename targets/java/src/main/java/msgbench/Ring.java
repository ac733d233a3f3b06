package msgbench;

import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

/** The process ring of seed 004: n threads in a ring, a token passed m laps round it. */
final class Ring {
  static final Set<String> OPTIONS = Set.of("model", "warmup_iterations", "queue");

  /** The three messages of the ring share one inbox per link, as in the seed's mailbox. */
  sealed interface Msg permits Connect, Token, Collect {}

  /** The seed's {connect, Link}: travels from the last link back to the root; counts the links. */
  record Connect(BlockingQueue<Msg> inbox, long links) implements Msg {}

  /** The seed's {Laps, Payload}. */
  record Token(long laps, String payload) implements Msg {}

  /** After the timed laps: each link adds its hop count, forwards it and ends. */
  record Collect(long hops) implements Msg {}

  /** What one run measured and counted. */
  record Outcome(
      long createWall,
      long createCpu,
      long passWall,
      long passCpu,
      long hops,
      long laps,
      long links) {}

  private Ring() {}

  /** The inbox of every link (option queue; README.md, "Ring: the queue"). */
  static Supplier<BlockingQueue<Msg>> queue(String name) throws WorkerError {
    return switch (name) {
      case "linked_transfer" -> LinkedTransferQueue::new;
      case "linked" -> LinkedBlockingQueue::new;
      case "array" -> () -> new ArrayBlockingQueue<>(1);
      case "synchronous" -> SynchronousQueue::new;
      default ->
          throw WorkerError.internal(
              "option queue = \""
                  + name
                  + "\" is not one of linked_transfer, linked, array, synchronous");
    };
  }

  static Wire.Result measure(Request req, Model model) throws WorkerError, InterruptedException {
    req.onlyOptions(OPTIONS);
    long n = req.longParam("n");
    long m = req.longParam("m");
    String payload = req.stringParam("payload");
    Supplier<BlockingQueue<Msg>> queue = queue(req.stringOption("queue", "linked_transfer"));
    Outcome out;
    if (model == Model.PEKKO) {
      long available = Proc.availableBytes();
      if (available > 0 && n > available / PekkoRing.BYTES_PER_LINK) {
        throw WorkerError.resource(
            n
                + " pekko links need about "
                + (n * PekkoRing.BYTES_PER_LINK >> 20)
                + " MiB at "
                + PekkoRing.BYTES_PER_LINK
                + " bytes each (a supervision chain n deep), more than the "
                + (available >> 20)
                + " MiB available");
      }
      out = PekkoRing.run(n, m, payload);
    } else {
      if (model.platform()) {
        Proc.checkPlatformThreads(n);
      }
      out = run(n, m, payload, model.threads("link-"), queue);
    }
    Wire.Result r = new Wire.Result();
    r.measured.put("create_wall_ns", out.createWall);
    r.measured.put("create_cpu_ns", out.createCpu);
    r.measured.put("pass_wall_ns", out.passWall);
    r.measured.put("pass_cpu_ns", out.passCpu);
    r.measured.put("peak_rss_bytes", Proc.peakRssBytes());
    r.verify.put("hops", out.hops);
    r.verify.put("laps", out.laps);
    r.verify.put("links", out.links);
    return r;
  }

  /**
   * Builds the ring, passes the token m laps, collects the counts. The calling thread is the root.
   */
  static Outcome run(
      long n, long m, String payload, ThreadFactory threads, Supplier<BlockingQueue<Msg>> queue)
      throws InterruptedException, WorkerError {
    BlockingQueue<Msg> inbox = queue.get();
    Context c = new Context(threads, queue, inbox);

    // Phase 1: the root spawns link n-1; the chain spawns itself; connect comes back.
    long wall0 = Proc.now();
    long cpu0 = Proc.cpuNs();
    c.spawn(() -> link(n - 1, inbox, c));
    Connect joined = (Connect) inbox.take();
    long wall1 = Proc.now();
    long cpu1 = Proc.cpuNs();
    BlockingQueue<Msg> next = joined.inbox;

    // Phase 2: the lap counter.
    next.put(new Token(m, payload));
    long sends = 1;
    long laps = 0;
    while (true) {
      Token t = (Token) inbox.take();
      laps++;
      if (t.laps == 1) {
        break;
      }
      next.put(new Token(t.laps - 1, t.payload));
      sends++;
    }
    long wall2 = Proc.now();
    long cpu2 = Proc.cpuNs();

    // After the timing: gather the links' counts and stop them.
    next.put(new Collect(0));
    Collect gathered = (Collect) inbox.take();
    if (c.failure != null) {
      throw WorkerError.internal("a link failed: " + c.failure);
    }
    return new Outcome(
        wall1 - wall0,
        cpu1 - cpu0,
        wall2 - wall1,
        cpu2 - cpu1,
        sends + gathered.hops,
        laps,
        joined.links + 1);
  }

  /** What every link shares. */
  static final class Context {
    final ThreadFactory threads;
    final Supplier<BlockingQueue<Msg>> queue;
    final BlockingQueue<Msg> root;
    volatile Throwable failure;

    Context(ThreadFactory threads, Supplier<BlockingQueue<Msg>> queue, BlockingQueue<Msg> root) {
      this.threads = threads;
      this.queue = queue;
      this.root = root;
    }

    interface Body {
      void run() throws InterruptedException;
    }

    void spawn(Body body) {
      Thread t =
          threads.newThread(
              () -> {
                try {
                  body.run();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } catch (RuntimeException | Error e) {
                  failure = e;
                }
              });
      t.start();
    }
  }

  /**
   * The seed's newLink: remaining counts this link and those it still spawns; prev is its
   * predecessor's inbox.
   */
  static void link(long remaining, BlockingQueue<Msg> prev, Context c) throws InterruptedException {
    BlockingQueue<Msg> inbox = c.queue.get();
    if (remaining == 1) {
      prev.put(new Connect(inbox, 1));
      forward(inbox, c.root);
      return;
    }
    c.spawn(() -> link(remaining - 1, inbox, c));
    Connect joined = (Connect) inbox.take();
    prev.put(new Connect(inbox, joined.links + 1));
    forward(inbox, joined.inbox);
  }

  /** The seed's passMsgOn: pass on whatever arrives, counting hops, until collect comes by. */
  static void forward(BlockingQueue<Msg> inbox, BlockingQueue<Msg> next)
      throws InterruptedException {
    long hops = 0;
    while (true) {
      Msg msg = inbox.take();
      if (msg instanceof Collect col) {
        next.put(new Collect(col.hops + hops));
        return;
      }
      next.put(msg);
      hops++;
    }
  }
}
