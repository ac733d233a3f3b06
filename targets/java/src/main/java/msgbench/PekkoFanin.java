package msgbench;

import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import msgbench.kit.Proc;
import msgbench.kit.WorkerError;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * fanin with Apache Pekko typed actors: N sender actors tell one receiver actor. An actor must not
 * loop for the whole run (it would hold a dispatcher thread), so a sender sends up to BATCH signals
 * per turn, checking the stop after every send, then tells itself Continue and gives the dispatcher
 * back. Mailboxes are unbounded, as Erlang's: the receiver's backlog is watched against
 * memory_limit_mb instead of bounded.
 */
final class PekkoFanin {
  private PekkoFanin() {}

  /**
   * Sends per turn of a sender: Pekko's default dispatcher also gives an actor 5 messages a turn.
   */
  static final int BATCH = 64;

  /** How often the coordinator checks the heap against memory_limit_mb while signals flow. */
  static final long WATCH_MS = 10;

  sealed interface Cmd permits Go, Continue, Sig, End {}

  /** The release: every sender starts. */
  record Go() implements Cmd {}

  record Continue() implements Cmd {}

  /** A signal with its own copy of the payload. */
  record Sig(int kind, long[] words) implements Cmd {}

  /** A sender's end marker (the OTP suite's stop to the receiver). */
  record End() implements Cmd {}

  static final Continue CONTINUE = new Continue();

  /** What the coordinator and the actors share: Fanin's clocks and counts, and the handshakes. */
  static final class Shared {
    final Fanin.Clock clock = new Fanin.Clock();
    final CompletableFuture<long[]> received = new CompletableFuture<>(); // kinds..., last receive
    final CompletableFuture<Void> ready = new CompletableFuture<>();
    final CompletableFuture<Void> reported = new CompletableFuture<>();
    volatile boolean stopped;
    int unreported;
  }

  static Fanin.Outcome run(int senders, long durationMs, Fanin.Choice[] table, long limitBytes)
      throws WorkerError, InterruptedException {
    Shared sh = new Shared();
    sh.unreported = senders;
    ActorSystem<Cmd> system =
        ActorSystem.create(guardian(senders, table, sh), "fanin", PekkoRing.config());
    try {
      sh.ready.get(60, TimeUnit.SECONDS);
      Fanin.Clock clock = sh.clock;
      clock.start();
      system.tell(new Go());
      long end = clock.start + durationMs * 1_000_000;
      for (long now = Proc.now(); now < end; now = Proc.now()) {
        TimeUnit.NANOSECONDS.sleep(Math.min(end - now, WATCH_MS * 1_000_000));
        watch(limitBytes, sh);
      }
      sh.stopped = true;
      sh.reported.get(60, TimeUnit.SECONDS);
      clock.sendersStopped();
      long[] got = null;
      while (got == null) {
        try {
          got = sh.received.get(WATCH_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
          watch(limitBytes, sh);
        }
      }
      return clock.outcome(new long[] {got[0], got[1]}, got[2]);
    } catch (ExecutionException | TimeoutException e) {
      throw WorkerError.internal("the pekko fanin did not complete: " + e);
    } finally {
      system.terminate();
    }
  }

  /** Stops the run with a resource error once the heap in use passes the limit. */
  static void watch(long limitBytes, Shared sh) throws WorkerError {
    Runtime rt = Runtime.getRuntime();
    long used = rt.totalMemory() - rt.freeMemory();
    if (used > limitBytes) { // garbage counts too until a collection says otherwise
      System.gc();
      used = rt.totalMemory() - rt.freeMemory();
    }
    if (used > limitBytes) {
      sh.stopped = true;
      throw WorkerError.resource(
          "the receiver's backlog took the heap to "
              + (used >> 20)
              + " MiB, past memory_limit_mb = "
              + (limitBytes >> 20)
              + " (Pekko mailboxes are unbounded)");
    }
  }

  static Behavior<Cmd> guardian(int senders, Fanin.Choice[] table, Shared sh) {
    return Behaviors.setup(
        ctx -> {
          ActorRef<Cmd> receiver = ctx.spawn(receiver(senders, sh), "receiver");
          @SuppressWarnings("unchecked")
          ActorRef<Cmd>[] all = (ActorRef<Cmd>[]) new ActorRef<?>[senders];
          for (int i = 0; i < senders; i++) {
            all[i] = ctx.spawn(sender(table, receiver, sh), "sender-" + i);
          }
          sh.ready.complete(null);
          return Behaviors.receive(Cmd.class)
              .onMessage(
                  Go.class,
                  go -> {
                    for (ActorRef<Cmd> s : all) {
                      s.tell(go);
                    }
                    return Behaviors.same();
                  })
              .build();
        });
  }

  /** The OTP suite's ReceiveFun: count what arrives until every sender's end marker is in. */
  static Behavior<Cmd> receiver(int senders, Shared sh) {
    long[] got = new long[3];
    int[] ended = new int[1];
    return Behaviors.receive(Cmd.class)
        .onMessage(
            Sig.class,
            sig -> {
              got[sig.kind]++;
              return Behaviors.same();
            })
        .onMessage(
            End.class,
            e -> {
              if (++ended[0] == senders) {
                got[2] = Proc.now();
                sh.received.complete(got.clone());
              }
              return Behaviors.same();
            })
        .build();
  }

  /** The OTP suite's do_work: pick, send, check the stop; a turn of at most BATCH sends. */
  static Behavior<Cmd> sender(Fanin.Choice[] table, ActorRef<Cmd> receiver, Shared sh) {
    return Behaviors.setup(
        ctx -> {
          long[] mine = new long[2];
          SplittableRandom rng = new SplittableRandom();
          return Behaviors.receive(Cmd.class)
              .onMessage(Go.class, go -> turn(ctx.getSelf(), table, receiver, sh, mine, rng))
              .onMessage(Continue.class, c -> turn(ctx.getSelf(), table, receiver, sh, mine, rng))
              .build();
        });
  }

  static Behavior<Cmd> turn(
      ActorRef<Cmd> self,
      Fanin.Choice[] table,
      ActorRef<Cmd> receiver,
      Shared sh,
      long[] mine,
      SplittableRandom rng) {
    for (int i = 0; i < BATCH; i++) {
      Fanin.Choice c = Fanin.Choice.pick(table, rng.nextDouble());
      receiver.tell(new Sig(c.kind(), c.words().clone()));
      mine[c.kind()]++;
      if (sh.stopped) {
        sh.clock.sent(mine);
        synchronized (sh) {
          if (--sh.unreported == 0) {
            sh.reported.complete(null);
          }
        }
        receiver.tell(new End());
        return Behaviors.stopped();
      }
    }
    self.tell(CONTINUE);
    return Behaviors.same();
  }
}
