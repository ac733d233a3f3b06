package msgbench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The ring with Apache Pekko typed actors: the root is the actor system's guardian, each link an
 * actor that spawns the next (so the ring is also a supervision chain n deep, as the seed's links
 * are each other's spawners). Messages are immutable records told to an ActorRef.
 */
final class PekkoRing {
  private PekkoRing() {}

  /**
   * Measured peak RSS per link of 10,000- and 100,000-link rings (README.md, "Limits"), rounded up:
   * a chain of actors each the child of the last weighs far more than a flat set of actors.
   */
  static final long BYTES_PER_LINK = 64 << 10;

  sealed interface Msg permits Connect, Token, Collect {}

  record Connect(ActorRef<Msg> link, long links) implements Msg {}

  record Token(long laps, String payload) implements Msg {}

  record Collect(long hops) implements Msg {}

  /** Pekko's defaults, its logging kept to warnings on stderr (stdout is the protocol's). */
  static Config config() {
    return ConfigFactory.parseString(
            "pekko.loglevel = WARNING\n"
                + "pekko.stdout-loglevel = OFF\n"
                + "pekko.log-dead-letters = off\n"
                + "pekko.log-dead-letters-during-shutdown = off\n"
                + "pekko.loggers = []\n")
        .withFallback(ConfigFactory.load());
  }

  static Ring.Outcome run(long n, long m, String payload) throws WorkerError, InterruptedException {
    CompletableFuture<Ring.Outcome> done = new CompletableFuture<>();
    ActorSystem<Msg> system = ActorSystem.create(root(n, m, payload, done), "ring", config());
    try {
      return done.get();
    } catch (ExecutionException e) {
      throw WorkerError.internal("the pekko ring failed: " + e.getCause());
    } finally {
      system.terminate();
    }
  }

  /** The seed's start/2 and lapCounter/1: the guardian builds the ring and counts the laps. */
  static Behavior<Msg> root(long n, long m, String payload, CompletableFuture<Ring.Outcome> done) {
    return Behaviors.setup(
        ctx -> {
          long wall0 = Proc.now();
          long cpu0 = Proc.cpuNs();
          ctx.spawnAnonymous(link(n - 1, ctx.getSelf(), ctx.getSelf()));
          long[] t = new long[8]; // wall1, cpu1, wall2, cpu2, sends, laps, links
          ActorRef<Msg>[] next = newRefs();
          return Behaviors.receive(Msg.class)
              .onMessage(
                  Connect.class,
                  c -> {
                    t[0] = Proc.now();
                    t[1] = Proc.cpuNs();
                    t[6] = c.links + 1;
                    next[0] = c.link;
                    c.link.tell(new Token(m, payload));
                    t[4] = 1;
                    return Behaviors.same();
                  })
              .onMessage(
                  Token.class,
                  tok -> {
                    t[5]++;
                    if (tok.laps == 1) {
                      t[2] = Proc.now();
                      t[3] = Proc.cpuNs();
                      next[0].tell(new Collect(0));
                    } else {
                      next[0].tell(new Token(tok.laps - 1, tok.payload));
                      t[4]++;
                    }
                    return Behaviors.same();
                  })
              .onMessage(
                  Collect.class,
                  col -> {
                    done.complete(
                        new Ring.Outcome(
                            t[0] - wall0,
                            t[1] - cpu0,
                            t[2] - t[0],
                            t[3] - t[1],
                            t[4] + col.hops,
                            t[5],
                            t[6]));
                    return Behaviors.same();
                  })
              .build();
        });
  }

  @SuppressWarnings("unchecked")
  static ActorRef<Msg>[] newRefs() {
    return (ActorRef<Msg>[]) new ActorRef<?>[1];
  }

  /** The seed's newLink: spawn the rest of the chain, wait for connect, then pass messages on. */
  static Behavior<Msg> link(long remaining, ActorRef<Msg> prev, ActorRef<Msg> root) {
    return Behaviors.setup(
        ctx -> {
          if (remaining == 1) {
            prev.tell(new Connect(ctx.getSelf(), 1));
            return forward(root);
          }
          ctx.spawnAnonymous(link(remaining - 1, ctx.getSelf(), root));
          return Behaviors.receive(Msg.class)
              .onMessage(
                  Connect.class,
                  c -> {
                    prev.tell(new Connect(ctx.getSelf(), c.links + 1));
                    return forward(c.link);
                  })
              .build();
        });
  }

  /**
   * The seed's passMsgOn: forward everything, counting hops, until collect comes by. The link does
   * not stop after collect: stopping an actor stops its children first, before they could pass
   * collect on; the actor system ends them all afterwards.
   */
  static Behavior<Msg> forward(ActorRef<Msg> next) {
    long[] hops = new long[1];
    return Behaviors.receive(Msg.class)
        .onMessage(
            Token.class,
            tok -> {
              next.tell(tok);
              hops[0]++;
              return Behaviors.same();
            })
        .onMessage(
            Collect.class,
            col -> {
              next.tell(new Collect(col.hops + hops[0]));
              return Behaviors.same();
            })
        .build();
  }
}
