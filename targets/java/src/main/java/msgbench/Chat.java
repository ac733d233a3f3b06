package msgbench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import msgbench.kit.Histogram;
import msgbench.kit.Model;
import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * The Chut chat-server benchmark of seed 003: G groups of CPG users message each other for T
 * seconds. Every process of the seed is a thread (platform or virtual) with an inbox: a client
 * drives its user and listens for deliveries; a message goes client -> its user -> the group -> the
 * peer user (which keeps it in its history) -> the peer's client, which counts it.
 */
final class Chat {
  static final Set<String> OPTIONS = Set.of("model", "warmup_iterations", "yield");

  /** The seed's sentence (with an em dash, U+2014). */
  static final String SENTENCE = "I've been mad for fucking years\u2014absolutely years";

  static final byte[] SENTENCE_UTF8 = SENTENCE.getBytes(StandardCharsets.UTF_8);

  /**
   * Back-pressure (README.md, "Chat: queues"): a client may have at most this many messages waiting
   * at its user, and a group's inbox holds at most this many; deliveries never wait.
   */
  static final int CREDITS = 16;

  /**
   * Measured peak RSS per user of realistic runs (README.md, "Limits"), rounded up: virtual threads
   * (the largest of virtual and pekko) 15.9 KB per user; platform threads 109 KB per thread, two
   * threads per user.
   */
  static final long VIRTUAL_BYTES_PER_USER = 16 << 10;

  static final long PLATFORM_BYTES_PER_THREAD = 112 << 10;

  /** How often the coordinator adds up the clients' received counts during the drain. */
  static final long DRAIN_POLL_NS = 1_000_000;

  private Chat() {}

  /**
   * What travels: from the client's send on nobody writes to it, so it is handed on by reference.
   */
  static final class Msg {
    final int from;
    final int to;
    final int group;
    final long sentAt;
    final Object body; // the one shared SENTENCE (text), or a byte[] of its own (binary)

    Msg(int from, int to, int group, long sentAt, Object body) {
      this.from = from;
      this.to = to;
      this.group = group;
      this.sentAt = sentAt;
      this.body = body;
    }

    /** From client index of group, now, to a peer drawn uniformly among the group's others. */
    static Msg draw(Params p, SplittableRandom rng, int group, int index, long now) {
      int peer = rng.nextInt(p.cpg - 1);
      if (peer >= index) {
        peer++; // skip itself
      }
      return new Msg(index, peer, group, now, body(p, now));
    }
  }

  /** A message on its way from the group to the peer user (a user's one inbox holds both kinds). */
  record Delivery(Msg msg) {}

  static final class Params {
    int groups;
    int cpg;
    long durationNs;
    long thinkNs;
    long listenerDelayNs;
    boolean binary;
    boolean yield;
    int history;
    long drainTimeoutNs;

    long users() {
      return (long) groups * cpg;
    }
  }

  /**
   * One measurement's phases and clocks, whatever carries the messages (threads here, actors in
   * PekkoChat, whose sessions both extend it): setup until every process is ready, the send window
   * from the release to T, the drain. Its latches and counters are what every process of the
   * measurement shares; start and deadline are set before the release.
   */
  static class Measurement {
    final Params p;
    final CountDownLatch ready;
    final CountDownLatch stopped;
    final AtomicLong sent = new AtomicLong();
    volatile long start;
    volatile long deadline;
    long begin;
    long setup;
    long runtimeMemory;
    long stoppedAt;
    long sentAtStop;

    Measurement(Params p) {
      this.p = p;
      this.ready = new CountDownLatch((int) (p.groups + 2 * p.users()));
      this.stopped = new CountDownLatch((int) p.users());
    }

    /** Setup: the spawning of every group, user and client. */
    void beginSetup() {
      begin = Proc.now();
    }

    /** Every process is ready: from a clean heap, as fanin does, the send window opens. */
    void openWindow() {
      setup = Proc.now() - begin;
      System.gc();
      start = Proc.now();
      deadline = start + p.durationNs;
    }

    /** Sleeps until T, then takes the JVM's own view of its memory. */
    void awaitT() throws InterruptedException {
      long toT = deadline - Proc.now();
      if (toT > 0) {
        TimeUnit.NANOSECONDS.sleep(toT);
      }
      runtimeMemory = Proc.runtimeMemoryBytes();
    }

    /** Every client has stopped sending on its own at T: the drain begins. */
    void sendingStopped() {
      stoppedAt = Proc.now();
      sentAtStop = sent.get();
    }

    /** The drain goes on until every message sent was received, or the drain timeout. */
    boolean draining(long received) {
      return received < sentAtStop && Proc.now() < stoppedAt + p.drainTimeoutNs;
    }

    /** The result line of what the clients counted; processes and users as started. */
    Wire.Result result(ChatTally tally, long processes, long users) throws WorkerError {
      return tally.result(
          setup, stoppedAt - start, deadline, processes, runtimeMemory, sentAtStop, users);
    }
  }

  /** The threads' measurement: the release, the threads, the first failure. */
  static final class Session extends Measurement {
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final List<Thread> threads = new ArrayList<>();

    Session(Params p) {
      super(p);
    }
  }

  /**
   * The stand-in for the seed's supervisor: every thread's failure is reported, and ends the run.
   */
  interface Body {
    void run() throws InterruptedException;
  }

  static void spawn(Session s, ThreadFactory threads, Body body) {
    Thread t =
        threads.newThread(
            () -> {
              try {
                body.run();
              } catch (InterruptedException e) {
                // the coordinator ends the run
              } catch (RuntimeException | Error e) {
                s.failure.compareAndSet(null, e);
                s.ready.countDown();
                s.stopped.countDown();
              }
            });
    s.threads.add(t);
    t.start();
  }

  /** A group: routes every message to the peer it names, one at a time. */
  static final class Group {
    final BlockingQueue<Msg> inbox = new ArrayBlockingQueue<>(CREDITS);
    final User[] members;
    volatile boolean started;

    Group(int cpg) {
      members = new User[cpg];
    }

    void run(Session s) throws InterruptedException {
      started = true;
      s.ready.countDown();
      while (true) {
        Msg m = inbox.take();
        members[m.to].inbox.put(new Delivery(m));
      }
    }
  }

  /**
   * A user: passes its client's messages to the group, and the group's to its client, keeping the
   * last ones.
   */
  static final class User {
    final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    final Semaphore credits = new Semaphore(CREDITS);
    final History history;
    Group group;
    Client client;
    volatile boolean started;

    User(int history) {
      this.history = new History(history);
    }

    void run(Session s) throws InterruptedException {
      started = true;
      s.ready.countDown();
      while (true) {
        Object o = inbox.take();
        if (o instanceof Delivery d) {
          history.keep(d.msg);
          client.inbox.put(d.msg);
        } else {
          credits.release();
          group.inbox.put((Msg) o);
        }
      }
    }
  }

  /** The last messages delivered to a user, the oldest overwritten once it is full. */
  static final class History {
    final Msg[] kept;
    int next;
    long stored;

    History(int size) {
      kept = new Msg[size];
    }

    void keep(Msg m) {
      stored++;
      if (kept.length == 0) {
        return;
      }
      kept[next] = m;
      next = next + 1 == kept.length ? 0 : next + 1;
    }
  }

  /** A client: drives its user and counts what is delivered to it. */
  static final class Client {
    final BlockingQueue<Msg> inbox = new LinkedBlockingQueue<>();
    final int group;
    final int index;
    final User user;
    final SplittableRandom rng;
    final Counts counts = new Counts();
    volatile boolean started;

    Client(int group, int index, User user, SplittableRandom rng) {
      this.group = group;
      this.index = index;
      this.user = user;
      this.rng = rng;
    }

    void run(Session s) throws InterruptedException {
      started = true;
      s.ready.countDown();
      s.release.await();
      if (s.p.thinkNs == 0) {
        stress(s);
      } else {
        realistic(s);
      }
      s.sent.addAndGet(counts.sent);
      s.stopped.countDown();
      while (true) { // the drain: take deliveries until the coordinator ends the run
        receive(s, inbox.take());
      }
    }

    /** Send; listen for the listener delay (without one: take what is there); again, until T. */
    void stress(Session s) throws InterruptedException {
      long delay = s.p.listenerDelayNs;
      while (true) {
        long now = Proc.now();
        if (now >= s.deadline) {
          return;
        }
        send(s, now);
        if (delay == 0) {
          for (Msg m = inbox.poll(); m != null; m = inbox.poll()) {
            receive(s, m);
          }
          if (s.p.yield) {
            Thread.yield(); // let the groups and users have the carrier (README.md, "chat")
          }
        } else {
          listenUntil(s, Proc.now() + delay);
        }
      }
    }

    /**
     * Send every think time from a random phase in the first, listening in between, while due
     * before T.
     */
    void realistic(Session s) throws InterruptedException {
      long due = s.start + rng.nextLong(s.p.thinkNs);
      while (due < s.deadline) {
        listenUntil(s, due);
        send(s, Proc.now());
        due += s.p.thinkNs;
      }
    }

    void listenUntil(Session s, long until) throws InterruptedException {
      for (long left = until - Proc.now(); left > 0; left = until - Proc.now()) {
        Msg m = inbox.poll(left, TimeUnit.NANOSECONDS);
        if (m != null) {
          receive(s, m);
        }
      }
    }

    /** To a peer drawn uniformly among the other members of the group, once the user has room. */
    void send(Session s, long now) throws InterruptedException {
      Msg m = Msg.draw(s.p, rng, group, index, now);
      user.credits.acquire();
      user.inbox.put(m);
      counts.sent++;
    }

    void receive(Session s, Msg m) {
      counts.receive(m, s.deadline, group, index);
    }
  }

  /**
   * What a client counts, by threads (Chat.Client) or by actors (PekkoChat): written by its client
   * only; received is read by the coordinator during the drain, the rest at the end.
   */
  static final class Counts {
    final Histogram latency = new Histogram();
    volatile long received;
    long sent;
    long inWindow;
    long crossGroup;
    long selfDeliveries;
    long lastDelivery;

    /** A delivery to client index of group, whose window ends at deadline. */
    void receive(Msg m, long deadline, int group, int index) {
      long now = Proc.now();
      received++;
      if (now < deadline) {
        inWindow++;
      }
      if (m.group != group) {
        crossGroup++;
      } else if (m.from == index) {
        selfDeliveries++;
      }
      latency.record(now - m.sentAt);
      lastDelivery = now;
    }
  }

  /**
   * text: the one shared sentence; binary: the seed's term_to_binary({Text, os:timestamp()}), the
   * sentence and the send time in a buffer of its own.
   */
  static Object body(Params p, long now) {
    if (!p.binary) {
      return SENTENCE;
    }
    byte[] b = new byte[SENTENCE_UTF8.length + 8];
    System.arraycopy(SENTENCE_UTF8, 0, b, 0, SENTENCE_UTF8.length);
    for (int i = 0; i < 8; i++) {
      b[SENTENCE_UTF8.length + i] = (byte) (now >>> (56 - 8 * i));
    }
    return b;
  }

  static Params parse(Request req) throws WorkerError {
    req.onlyOptions(OPTIONS);
    Params p = new Params();
    p.groups = (int) req.longParam("groups");
    p.cpg = (int) req.longParam("clients_per_group");
    p.durationNs = Math.round(req.doubleParam("duration_s") * 1e9);
    p.thinkNs = req.longParam("think_ms") * 1_000_000;
    p.listenerDelayNs = req.longParam("listener_delay_ms") * 1_000_000;
    p.binary = req.stringParam("message").equals("binary");
    p.history = (int) req.longParam("history");
    p.yield = req.booleanOption("yield", false);
    p.drainTimeoutNs = Math.round(req.doubleParam("drain_timeout_s") * 1e9);
    return p;
  }

  static Wire.Result measure(Request req) throws WorkerError, InterruptedException {
    Model model = Model.of(req);
    Params p = parse(req);
    long procs = p.groups + 2 * p.users();
    if (model.platform()) {
      Proc.checkPlatformThreads(procs, PLATFORM_BYTES_PER_THREAD);
    }
    long perUser = VIRTUAL_BYTES_PER_USER + p.history * (8L + 40 + (p.binary ? 72 : 0));
    long available = Proc.availableBytes();
    if (available > 0 && p.users() > available / perUser) {
      throw WorkerError.resource(
          p.users()
              + " users need about "
              + (p.users() * perUser >> 20)
              + " MiB at "
              + perUser
              + " bytes per user, more than the "
              + (available >> 20)
              + " MiB available");
    }
    if (model == Model.PEKKO) {
      return PekkoChat.run(p);
    }
    return run(p, model.threads("chat-"));
  }

  static Wire.Result run(Params p, ThreadFactory threads) throws WorkerError, InterruptedException {
    Session s = new Session(p);
    int n = (int) p.users();
    Group[] groups = new Group[p.groups];
    Client[] clients = new Client[n];
    try {
      s.beginSetup();
      spawnAll(s, threads, groups, clients);
      awaitOrFail(s, s.ready);
      s.openWindow();
      s.release.countDown();
      s.awaitT();
      awaitOrFail(s, s.stopped);
      s.sendingStopped();
      while (s.draining(received(clients)) && s.failure.get() == null) {
        TimeUnit.NANOSECONDS.sleep(DRAIN_POLL_NS);
      }
      stopAll(s);
      failed(s);
      return report(s, groups, clients);
    } finally {
      stopAll(s);
    }
  }

  /** Setup: each group, then its users and their clients, a thread each. */
  static void spawnAll(Session s, ThreadFactory threads, Group[] groups, Client[] clients) {
    Params p = s.p;
    SplittableRandom seeds = new SplittableRandom();
    for (int g = 0; g < p.groups; g++) {
      Group grp = new Group(p.cpg);
      groups[g] = grp;
      for (int i = 0; i < p.cpg; i++) {
        User u = new User(p.history);
        u.group = grp;
        Client c = new Client(g, i, u, seeds.split());
        u.client = c;
        grp.members[i] = u;
        clients[g * p.cpg + i] = c;
      }
      spawn(s, threads, () -> grp.run(s));
      for (int i = 0; i < p.cpg; i++) {
        User u = grp.members[i];
        Client c = clients[g * p.cpg + i];
        spawn(s, threads, () -> u.run(s));
        spawn(s, threads, () -> c.run(s));
      }
    }
  }

  /** After the drain, every thread stopped: the processes that started and what clients counted. */
  static Wire.Result report(Session s, Group[] groups, Client[] clients) throws WorkerError {
    long processes = 0;
    long users = 0;
    ChatTally tally = new ChatTally();
    for (Group grp : groups) {
      processes += grp.started ? 1 : 0;
    }
    for (Client c : clients) {
      users += c.user.started ? 1 : 0;
      processes += (c.user.started ? 1 : 0) + (c.started ? 1 : 0);
      tally.add(c.counts);
    }
    return s.result(tally, processes, users);
  }

  static long received(Client[] clients) {
    long sum = 0;
    for (Client c : clients) {
      sum += c.counts.received;
    }
    return sum;
  }

  /**
   * Ends every thread (an interrupt ends any wait) and waits for them: their counts are then ours.
   */
  static void stopAll(Session s) throws InterruptedException {
    for (Thread t : s.threads) {
      t.interrupt();
    }
    for (Thread t : s.threads) {
      t.join();
    }
  }

  /** Waits for latch, ending the wait (and the run) as soon as any thread has crashed. */
  static void awaitOrFail(Session s, CountDownLatch latch)
      throws WorkerError, InterruptedException {
    while (!latch.await(10, TimeUnit.MILLISECONDS)) {
      failed(s);
    }
    failed(s);
  }

  static void failed(Session s) throws WorkerError {
    Throwable t = s.failure.get();
    if (t != null) {
      throw WorkerError.internal("a chat thread crashed: " + t);
    }
  }
}
