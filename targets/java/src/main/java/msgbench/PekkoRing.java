package msgbench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import msgbench.Ring.Collect;
import msgbench.Ring.Msg;
import msgbench.Ring.Root;
import msgbench.Ring.Token;
import msgbench.kit.Proc;
import msgbench.kit.WorkerError;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The ring with Apache Pekko typed actors, on Ring's model (its messages, Root, the report): the
 * root is the actor system's guardian, each link an actor that spawns the next (so the ring is also
 * a supervision chain n deep, as the seed's links are each other's spawners).
 */
final class PekkoRing {
  private PekkoRing() {}

  /**
   * Measured peak RSS per link of 10,000- and 100,000-link rings (README.md, "Limits"), rounded up:
   * a chain of actors each the child of the last weighs far more than a flat set of actors.
   */
  static final long BYTES_PER_LINK = 64 << 10;

  /** The seed's {connect, Link} between actors. */
  record Connect(ActorRef<Msg> link, long links) implements Msg {}

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

  static Root run(long n, long m, String payload) throws WorkerError, InterruptedException {
    long available = Proc.availableBytes();
    if (available > 0 && n > available / BYTES_PER_LINK) {
      throw WorkerError.resource(
          n
              + " pekko links need about "
              + (n * BYTES_PER_LINK >> 20)
              + " MiB at "
              + BYTES_PER_LINK
              + " bytes each (a supervision chain n deep), more than the "
              + (available >> 20)
              + " MiB available");
    }
    CompletableFuture<Root> done = new CompletableFuture<>();
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
  static Behavior<Msg> root(long n, long m, String payload, CompletableFuture<Root> done) {
    return Behaviors.setup(
        ctx -> {
          Root root = new Root();
          ctx.spawnAnonymous(link(n - 1, ctx.getSelf(), ctx.getSelf()));
          return Behaviors.receive(Msg.class)
              .onMessage(
                  Connect.class,
                  c -> {
                    c.link.tell(root.joined(c.links, m, payload));
                    return counting(root, c.link, done);
                  })
              .build();
        });
  }

  /** The root once the ring stands: laps until the last, then Collect, then the outcome. */
  static Behavior<Msg> counting(Root root, ActorRef<Msg> next, CompletableFuture<Root> done) {
    return Behaviors.receive(Msg.class)
        .onMessage(
            Token.class,
            tok -> {
              Token again = root.lap(tok);
              next.tell(again != null ? again : new Collect(0));
              return Behaviors.same();
            })
        .onMessage(
            Collect.class,
            col -> {
              root.hops = col.hops();
              done.complete(root);
              return Behaviors.same();
            })
        .build();
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
              next.tell(new Collect(col.hops() + hops[0]));
              return Behaviors.same();
            })
        .build();
  }
}
