package msgbench;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import msgbench.kit.Proc;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Chat with Apache Pekko typed actors: the guardian spawns the groups, each group its users, each
 * user its client, and every parent watches its children, so a crash anywhere ends the run (the
 * seed's supervisor, one_for_all without restarts). Mailboxes are unbounded, as Erlang's: nothing
 * holds a sender back.
 */
final class PekkoChat {
  private PekkoChat() {}

  sealed interface Cmd permits Post, Deliver, Start, Next {}

  /** A client's message on its way to the group. */
  record Post(Chat.Msg msg) implements Cmd {}

  /** A message on its way from the group to the peer user, and on to its client. */
  record Deliver(Chat.Msg msg) implements Cmd {}

  /** The release: the coordinator tells every client to start. */
  record Start() implements Cmd {}

  /**
   * A client's next round: stress (at once, or after the listener delay) or realistic (the next due
   * send).
   */
  record Next() implements Cmd {}

  static final Next NEXT = new Next();

  /**
   * The actors' measurement (Chat.Measurement: its phases, latches and clocks): the processes and
   * users that started, and every client's counts and address, each written before it is read.
   */
  static final class Session extends Chat.Measurement {
    final AtomicLong users = new AtomicLong();
    final AtomicLong processes = new AtomicLong();
    final ClientState[] clients;
    final ActorRef<Cmd>[] clientRefs;

    @SuppressWarnings("unchecked")
    Session(Chat.Params p) {
      super(p);
      int n = (int) p.users();
      this.clients = new ClientState[n];
      this.clientRefs = (ActorRef<Cmd>[]) new ActorRef<?>[n];
    }
  }

  static Wire.Result run(Chat.Params p) throws WorkerError, InterruptedException {
    Session s = new Session(p);
    // The actor system starts first (the runtime's boot, as the BEAM's is not timed either);
    // setup is the spawning of every group, user and client.
    ActorSystem<Cmd> system = ActorSystem.create(guardian(s), "chat", PekkoRing.config());
    try {
      s.beginSetup();
      system.tell(new Start());
      await(s.ready, system, "start");
      s.openWindow();
      for (ActorRef<Cmd> c : s.clientRefs) {
        c.tell(new Start());
      }
      s.awaitT();
      await(s.stopped, system, "stop sending");
      s.sendingStopped();
      while (s.draining(received(s))) {
        if (system.whenTerminated().isCompleted()) {
          throw WorkerError.internal(
              "an actor crashed during the drain (its parent's death pact ended the run)");
        }
        TimeUnit.NANOSECONDS.sleep(Chat.DRAIN_POLL_NS);
      }
      terminate(system);
      return report(s);
    } finally {
      terminate(system);
    }
  }

  static void terminate(ActorSystem<Cmd> system) throws InterruptedException {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      // the counts were read after the drain; a slow shutdown changes none
    }
  }

  static void await(CountDownLatch latch, ActorSystem<Cmd> system, String what)
      throws WorkerError, InterruptedException {
    while (!latch.await(10, TimeUnit.MILLISECONDS)) {
      if (system.whenTerminated().isCompleted()) {
        throw WorkerError.internal("an actor crashed before every client could " + what);
      }
    }
  }

  static long received(Session s) {
    long sum = 0;
    for (ClientState c : s.clients) {
      sum += c.counts.received;
    }
    return sum;
  }

  /** After the drain, the actor system ended: what the clients counted. */
  static Wire.Result report(Session s) throws WorkerError {
    ChatTally tally = new ChatTally();
    for (ClientState c : s.clients) {
      synchronized (c) {
        tally.add(c.counts);
      }
    }
    return s.result(tally, s.processes.get(), s.users.get());
  }

  /** The guardian spawns the groups when the coordinator says Start. */
  static Behavior<Cmd> guardian(Session s) {
    return Behaviors.receive(Cmd.class)
        .onMessage(
            Start.class,
            st ->
                Behaviors.setup(
                    ctx -> {
                      SplittableRandom seeds = new SplittableRandom();
                      for (int g = 0; g < s.p.groups; g++) {
                        ctx.watch(ctx.spawn(group(s, g, seeds.split()), "group-" + g));
                      }
                      return Behaviors.empty();
                    }))
        .build();
  }

  /** A group: spawns its users, then routes every message to the peer it names. */
  static Behavior<Cmd> group(Session s, int g, SplittableRandom seeds) {
    return Behaviors.setup(
        ctx -> {
          @SuppressWarnings("unchecked")
          ActorRef<Cmd>[] members = (ActorRef<Cmd>[]) new ActorRef<?>[s.p.cpg];
          for (int i = 0; i < s.p.cpg; i++) {
            members[i] = ctx.spawn(user(s, g, i, ctx.getSelf(), seeds.split()), "user-" + i);
            ctx.watch(members[i]);
          }
          s.processes.incrementAndGet();
          s.ready.countDown();
          return Behaviors.receive(Cmd.class)
              .onMessage(
                  Post.class,
                  post -> {
                    members[post.msg.to].tell(new Deliver(post.msg));
                    return Behaviors.same();
                  })
              .build();
        });
  }

  /**
   * A user: spawns its client; passes its posts to the group and the group's deliveries to it,
   * keeping the last ones.
   */
  static Behavior<Cmd> user(Session s, int g, int i, ActorRef<Cmd> group, SplittableRandom rng) {
    return Behaviors.setup(
        ctx -> {
          ActorRef<Cmd> client = ctx.spawn(client(s, g, i, ctx.getSelf(), rng), "client");
          ctx.watch(client);
          Chat.History history = new Chat.History(s.p.history);
          s.users.incrementAndGet();
          s.processes.incrementAndGet();
          s.ready.countDown();
          return Behaviors.receive(Cmd.class)
              .onMessage(
                  Post.class,
                  post -> {
                    group.tell(post);
                    return Behaviors.same();
                  })
              .onMessage(
                  Deliver.class,
                  d -> {
                    history.keep(d.msg);
                    client.tell(d);
                    return Behaviors.same();
                  })
              .build();
        });
  }

  /** A client actor's counts (Chat.Counts, as a client thread's) and its next due send. */
  static final class ClientState {
    final Chat.Counts counts = new Chat.Counts();
    long due;
    boolean sending;
  }

  static Behavior<Cmd> client(Session s, int g, int i, ActorRef<Cmd> user, SplittableRandom rng) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  ClientState c = new ClientState();
                  int k = g * s.p.cpg + i;
                  s.clients[k] = c;
                  s.clientRefs[k] = ctx.getSelf();
                  s.processes.incrementAndGet();
                  s.ready.countDown();
                  return Behaviors.receive(Cmd.class)
                      .onMessage(
                          Start.class,
                          st -> {
                            c.sending = true;
                            if (s.p.thinkNs == 0) {
                              round(s, c, g, i, user, ctx, timers, rng);
                            } else {
                              c.due = s.start + rng.nextLong(s.p.thinkNs);
                              schedule(s, c, timers);
                            }
                            return Behaviors.same();
                          })
                      .onMessage(
                          Next.class,
                          nx -> {
                            if (s.p.thinkNs == 0) {
                              round(s, c, g, i, user, ctx, timers, rng);
                            } else {
                              send(s, c, g, i, user, rng, Proc.now());
                              c.due += s.p.thinkNs;
                              schedule(s, c, timers);
                            }
                            return Behaviors.same();
                          })
                      .onMessage(
                          Deliver.class,
                          d -> {
                            receive(s, c, g, i, d.msg);
                            return Behaviors.same();
                          })
                      .build();
                }));
  }

  /**
   * Stress: send, then listen for the listener delay (a timer) or, without one, take what is there
   * (a Next to itself).
   */
  static void round(
      Session s,
      ClientState c,
      int g,
      int i,
      ActorRef<Cmd> user,
      ActorContext<Cmd> ctx,
      TimerScheduler<Cmd> timers,
      SplittableRandom rng) {
    long now = Proc.now();
    if (now >= s.deadline) {
      stop(s, c);
      return;
    }
    send(s, c, g, i, user, rng, now);
    if (s.p.listenerDelayNs == 0) {
      ctx.getSelf().tell(NEXT);
    } else {
      timers.startSingleTimer(NEXT, Duration.ofNanos(s.p.listenerDelayNs));
    }
  }

  /** Realistic: the next send at its due time, while it is due before T. */
  static void schedule(Session s, ClientState c, TimerScheduler<Cmd> timers) {
    if (c.due >= s.deadline) {
      stop(s, c);
      return;
    }
    timers.startSingleTimer(NEXT, Duration.ofNanos(Math.max(0, c.due - Proc.now())));
  }

  static void stop(Session s, ClientState c) {
    if (c.sending) {
      c.sending = false;
      s.sent.addAndGet(c.counts.sent);
      s.stopped.countDown();
    }
  }

  static void send(
      Session s, ClientState c, int g, int i, ActorRef<Cmd> user, SplittableRandom rng, long now) {
    user.tell(new Post(Chat.Msg.draw(s.p, rng, g, i, now)));
    c.counts.sent++;
  }

  static void receive(Session s, ClientState c, int g, int i, Chat.Msg m) {
    synchronized (c) {
      c.counts.receive(m, s.deadline, g, i);
    }
  }
}
