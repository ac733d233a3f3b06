package msgbench;

import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadFactory;
import msgbench.kit.Model;
import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * The process ring of seed 004: n links in a ring, a token passed m laps round it. The messages,
 * the root's clocks and counts (Root) and the report are the model the threads and virtual variants
 * (here: a thread per link, one LinkedTransferQueue inbox each; README.md, "Ring: the queue") share
 * with the pekko variant (PekkoRing: an actor per link).
 */
final class Ring {
  static final Set<String> OPTIONS = Set.of("model", "warmup_iterations");

  /** The messages of the ring; each carrier has its own Connect, which names a link's address. */
  sealed interface Msg permits Connect, PekkoRing.Connect, Token, Collect {}

  /** The seed's {connect, Link}: travels from the last link back to the root; counts the links. */
  record Connect(BlockingQueue<Msg> inbox, long links) implements Msg {}

  /** The seed's {Laps, Payload}. */
  record Token(long laps, String payload) implements Msg {}

  /** After the timed laps: each link adds its hop count, forwards it and ends. */
  record Collect(long hops) implements Msg {}

  private Ring() {}

  static Wire.Result measure(Request req) throws WorkerError, InterruptedException {
    Model model = Model.of(req);
    req.onlyOptions(OPTIONS);
    long n = req.longParam("n");
    long m = req.longParam("m");
    String payload = req.stringParam("payload");
    if (model.platform()) {
      Proc.checkPlatformThreads(n);
    }
    Root root = model == Model.PEKKO ? PekkoRing.run(n, m, payload) : run(n, m, payload, model);
    Wire.Result r = new Wire.Result();
    r.measured.put("create_wall_ns", root.wall1 - root.wall0);
    r.measured.put("create_cpu_ns", root.cpu1 - root.cpu0);
    r.measured.put("pass_wall_ns", root.wall2 - root.wall1);
    r.measured.put("pass_cpu_ns", root.cpu2 - root.cpu1);
    r.measured.put("peak_rss_bytes", Proc.peakRssBytes());
    r.verify.put("hops", root.sends + root.hops);
    r.verify.put("laps", root.laps);
    r.verify.put("links", root.links);
    return r;
  }

  /** The seed's lapCounter, whatever carries the messages: the clocks, laps, sends and hops. */
  static final class Root {
    final long wall0 = Proc.now();
    final long cpu0 = Proc.cpuNs();
    long wall1, cpu1, wall2, cpu2, sends, laps, links, hops;

    /** Connect came back, counting links - 1: the ring stands; the first token goes next. */
    Token joined(long counted, long m, String payload) {
      wall1 = Proc.now();
      cpu1 = Proc.cpuNs();
      links = counted + 1;
      sends = 1;
      return new Token(m, payload);
    }

    /** The token came back: the next lap's token, or null after the last (the clocks stop). */
    Token lap(Token t) {
      laps++;
      if (t.laps == 1) {
        wall2 = Proc.now();
        cpu2 = Proc.cpuNs();
        return null;
      }
      sends++;
      return new Token(t.laps - 1, t.payload);
    }
  }

  /** Builds the ring, passes the token m laps, collects the counts: the caller is the root. */
  static Root run(long n, long m, String payload, Model model)
      throws InterruptedException, WorkerError {
    Links links = new Links(model.threads("link-"), new LinkedTransferQueue<>());
    Root root = new Root();
    links.spawn(() -> links.link(n - 1, links.root));
    Connect joined = (Connect) links.root.take();
    Token token = root.joined(joined.links, m, payload);
    while (token != null) {
      joined.inbox.put(token);
      token = root.lap((Token) links.root.take());
    }
    // After the timing: gather the links' counts and stop them.
    joined.inbox.put(new Collect(0));
    root.hops = ((Collect) links.root.take()).hops;
    if (links.failure != null) {
      throw WorkerError.internal("a link failed: " + links.failure);
    }
    return root;
  }

  /** The links' threads, the root's inbox, and the first failure of a link. */
  static final class Links {
    final ThreadFactory threads;
    final BlockingQueue<Msg> root;
    volatile Throwable failure;

    Links(ThreadFactory threads, BlockingQueue<Msg> root) {
      this.threads = threads;
      this.root = root;
    }

    interface Body {
      void run() throws InterruptedException;
    }

    void spawn(Body body) {
      threads
          .newThread(
              () -> {
                try {
                  body.run();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } catch (RuntimeException | Error e) {
                  failure = e;
                }
              })
          .start();
    }

    /** The seed's newLink: remaining counts this link and those it spawns; prev's inbox. */
    void link(long remaining, BlockingQueue<Msg> prev) throws InterruptedException {
      BlockingQueue<Msg> inbox = new LinkedTransferQueue<>();
      if (remaining == 1) {
        prev.put(new Connect(inbox, 1));
        forward(inbox, root);
        return;
      }
      spawn(() -> link(remaining - 1, inbox));
      Connect joined = (Connect) inbox.take();
      prev.put(new Connect(inbox, joined.links + 1));
      forward(inbox, joined.inbox);
    }

    /** The seed's passMsgOn: pass on what arrives, counting hops, until Collect comes by. */
    static void forward(BlockingQueue<Msg> inbox, BlockingQueue<Msg> next)
        throws InterruptedException {
      long hops = 0;
      Msg msg;
      while (!((msg = inbox.take()) instanceof Collect collect)) {
        next.put(msg);
        hops++;
      }
      next.put(new Collect(collect.hops + hops));
    }
  }
}
