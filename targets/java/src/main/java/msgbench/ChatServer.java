package msgbench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import msgbench.kit.Proc;
import msgbench.kit.RuntimeView;
import msgbench.kit.Wire;
import org.java_websocket.WebSocket;
import org.java_websocket.exceptions.WebsocketNotConnectedException;
import org.java_websocket.framing.CloseFrame;
import org.java_websocket.handshake.ClientHandshake;
import org.java_websocket.server.WebSocketServer;

/**
 * The chat server kind's server (docs/chat-server.md): {@code msgbench-java --chat-server --listen
 * HOST:PORT}. WebSocket from Java-WebSocket (one NIO selector thread, one decoder thread per core);
 * as in Chut, every user and every group is a thread of its own (a virtual thread) with an inbox: a
 * frame from a user goes to its group's inbox, the group picks a random other member and puts the
 * payload in that user's inbox, and the user's thread keeps it in its history and writes it to its
 * connection. A connection whose first frame is {"stats": true} is a control connection.
 */
final class ChatServer extends WebSocketServer {
  /** A control connection's attachment. */
  private static final Object CONTROL = new Object();

  private static final ThreadFactory VIRTUAL = Thread.ofVirtual().name("chat-", 0).factory();

  private final ConcurrentHashMap<Long, ChatGroup> groups = new ConcurrentHashMap<>();
  private final AtomicLong connections = new AtomicLong();

  /** Users' and groups' threads alive (the server's "processes"). */
  private final AtomicLong threads = new AtomicLong();

  private final long seed = System.nanoTime();
  private final CountDownLatch started = new CountDownLatch(1);
  private final AtomicReference<Exception> startFailure = new AtomicReference<>();

  ChatServer(InetSocketAddress address) {
    super(address);
    setReuseAddr(true);
    // Deliveries are small frames whose latency is the measurement: no Nagle.
    setTcpNoDelay(true);
    // No keep-alive pings: the load generator holds its connections and closes them itself.
    setConnectionLostTimeout(0);
  }

  /** The command line after --chat-server: serves until SIGTERM or the end of stdin. */
  static int run(String[] args) {
    InetSocketAddress address;
    try {
      address = parseArgs(args);
    } catch (IllegalArgumentException e) {
      System.err.println("msgbench-java --chat-server: " + e.getMessage());
      return 2;
    }
    ChatServer server = new ChatServer(address);
    int port;
    try {
      port = server.startListening();
    } catch (IOException | InterruptedException e) {
      System.err.println("msgbench-java --chat-server: " + e.getMessage());
      return 1;
    }
    System.out.println("{\"listening\": " + port + "}");
    System.out.flush();
    watchStdin(System.in);
    // SIGTERM ends the JVM (status 143); the server thread keeps it alive until then.
    return waitForever();
  }

  /**
   * How often stalled writes are looked for. Java-WebSocket 1.6.0 (the newest release) has a lost
   * wake-up: a send from another thread queues its frame and asks the selector for OP_WRITE, but
   * the selector thread, having just written the connection's queue empty
   * (SocketChannelIOHelper.batch), then sets the interest back to OP_READ, and the new frame waits
   * for the connection's next send, which for a user just joined may never come (a {"joined"} not
   * written within 60 s, once in 15,000 joins). The library offers no hook to close that window
   * (onWriteDemand is final, the selector loop private), so every period a thread asks again for
   * every connection that still has frames queued: a stalled frame waits at most this long.
   * ChatServerTests.testAFrameSentAsTheSelectorGoesIdleIsStillWritten makes the race happen every
   * time and fails without this.
   */
  static final long WRITE_KICK_MS = 50;

  /** Starts the thread that re-asks for OP_WRITE where frames wait (WRITE_KICK_MS). */
  private void kickWrites() {
    Thread.ofPlatform()
        .daemon()
        .name("write-kick")
        .start(
            () -> {
              try {
                while (true) {
                  Thread.sleep(WRITE_KICK_MS);
                  for (WebSocket conn : getConnections()) {
                    if (conn.hasBufferedData()) {
                      onWriteDemand(conn);
                    }
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }

  /** Starts the server's threads; returns the port once it accepts connections. */
  int startListening() throws IOException, InterruptedException {
    start();
    started.await();
    Exception failure = startFailure.get();
    if (failure != null) {
      throw new IOException("cannot listen on " + getAddress() + ": " + failure, failure);
    }
    kickWrites();
    return getPort();
  }

  private static int waitForever() {
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 1;
  }

  /** --listen HOST:PORT, HOST an IP address. */
  static InetSocketAddress parseArgs(String[] args) {
    InetSocketAddress address = null;
    for (int i = 0; i < args.length; i++) {
      if (!args[i].equals("--listen")) {
        throw new IllegalArgumentException(
            "unknown argument \"" + args[i] + "\": the chat server accepts --listen HOST:PORT");
      }
      if (i + 1 == args.length) {
        throw new IllegalArgumentException("--listen needs a value: HOST:PORT, e.g. 0.0.0.0:0");
      }
      address = parseAddress(args[++i]);
    }
    if (address == null) {
      throw new IllegalArgumentException("--listen HOST:PORT is required, e.g. --listen 0.0.0.0:0");
    }
    return address;
  }

  private static InetSocketAddress parseAddress(String value) {
    int colon = value.lastIndexOf(':');
    String bad = "--listen \"" + value + "\" is not HOST:PORT with an IP address, e.g. 0.0.0.0:0";
    if (colon <= 0) {
      throw new IllegalArgumentException(bad);
    }
    String host = value.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(value.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(bad);
    }
    // Only literal addresses: a name would mean a DNS lookup.
    if (port < 0 || port > 65535 || !host.matches("[0-9.]+|\\[?[0-9a-fA-F:]+\\]?")) {
      throw new IllegalArgumentException(bad);
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(host.replaceAll("[\\[\\]]", "")), port);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(bad);
    }
  }

  /** Exits when stdin reaches its end: the load generator is gone. */
  private static void watchStdin(InputStream in) {
    Thread.ofPlatform()
        .daemon()
        .name("stdin-watch")
        .start(
            () -> {
              byte[] sink = new byte[256];
              try {
                while (in.read(sink) >= 0) {
                  // discard
                }
              } catch (IOException e) {
                // a broken stdin is a closed one
              }
              System.err.println("msgbench-java --chat-server: stdin closed, stopping");
              Runtime.getRuntime().halt(0);
            });
  }

  @Override
  public void onStart() {
    started.countDown();
  }

  @Override
  public void onOpen(WebSocket conn, ClientHandshake handshake) {
    // Nothing until its first frame says what it is.
  }

  @Override
  public void onMessage(WebSocket conn, String text) {
    Object who = conn.getAttachment();
    if (who instanceof User user) {
      user.group.send(new ChatGroup.Route(user.id, text));
    } else if (who == CONTROL) {
      if (isStats(text)) {
        conn.send(stats());
      }
    } else {
      first(conn, text);
    }
  }

  @Override
  public void onMessage(WebSocket conn, ByteBuffer bytes) {
    if (conn.getAttachment() instanceof User user) {
      // A copy of its own: the buffer belongs to the library.
      byte[] payload = new byte[bytes.remaining()];
      bytes.get(payload);
      user.group.send(new ChatGroup.Route(user.id, payload));
    } else if (conn.getAttachment() == null) {
      refuse(conn, "the first frame must be a join or stats text frame");
    }
  }

  @Override
  public void onClose(WebSocket conn, int code, String reason, boolean remote) {
    if (conn.getAttachment() instanceof User user) {
      user.leave();
    }
  }

  @Override
  public void onError(WebSocket conn, Exception e) {
    if (conn == null && started.getCount() > 0) { // the listener failed to start
      startFailure.set(e);
      started.countDown();
    } else if (!(e instanceof IOException)) { // resets and broken pipes are a client's leaving
      System.err.println("msgbench-java --chat-server: " + e);
    }
  }

  private void first(WebSocket conn, String text) {
    JsonNode node;
    try {
      node = Wire.JSON.readTree(text);
    } catch (IOException e) {
      refuse(conn, "first frame is not JSON: expected {\"join\": ...} or {\"stats\": true}");
      return;
    }
    if (node != null && node.path("stats").asBoolean(false)) {
      conn.setAttachment(CONTROL);
      conn.send(stats());
      return;
    }
    JsonNode join = node == null ? null : node.get("join");
    if (join == null || !join.isObject()) {
      refuse(
          conn,
          "expected {\"join\": {\"group\": G, \"user\": U, \"history\": H}} or {\"stats\": true}");
      return;
    }
    for (String field : new String[] {"group", "user", "history"}) {
      JsonNode value = join.get(field);
      if (value == null
          || !value.canConvertToLong()
          || !value.isIntegralNumber()
          || value.asLong() < 0) {
        refuse(conn, "join: " + field + " must be a non-negative integer");
        return;
      }
    }
    if (join.get("history").asLong() > Integer.MAX_VALUE) {
      refuse(conn, "join: history is too large");
      return;
    }
    long groupId = join.get("group").asLong();
    ChatGroup group = groups.computeIfAbsent(groupId, this::startGroup);
    User user = new User(this, conn, group, join.get("user").asLong(), join.get("history").asInt());
    conn.setAttachment(user);
    group.send(new ChatGroup.Join(user));
  }

  private ChatGroup startGroup(long id) {
    ChatGroup group = new ChatGroup(seed ^ (id * 0x9E3779B97F4A7C15L));
    startThread(group::run);
    return group;
  }

  private void startThread(Runnable body) {
    threads.incrementAndGet();
    VIRTUAL
        .newThread(
            () -> {
              try {
                body.run();
              } finally {
                threads.decrementAndGet();
              }
            })
        .start();
  }

  private static boolean isStats(String text) {
    try {
      JsonNode node = Wire.JSON.readTree(text);
      return node != null && node.path("stats").asBoolean(false);
    } catch (IOException e) {
      return false;
    }
  }

  private static void refuse(WebSocket conn, String reason) {
    System.err.println("msgbench-java --chat-server: refused a connection: " + reason);
    // A close reason is limited to 123 bytes.
    conn.close(
        CloseFrame.POLICY_VALIDATION, reason.length() > 120 ? reason.substring(0, 120) : reason);
  }

  /** The answer to {"stats": true}: docs/chat-server.md's keys, the JVM's view in runtime. */
  String stats() {
    long[] rss = RuntimeView.rssAndPeakBytes();
    ObjectNode n = Wire.JSON.createObjectNode();
    n.put("peak_rss_bytes", rss[1])
        .put("rss_bytes", rss[0])
        .put("cpu_ns", Proc.cpuNs())
        .put("connections", connections.get())
        .put("processes", threads.get());
    ObjectNode runtime = n.putObject("runtime");
    RuntimeView.jvm().forEach(runtime::put);
    // The runtime's total (the load generator's runtime_memory_bytes), as the in-process
    // chat reports it: heap and non-heap committed.
    runtime.put("total_bytes", Proc.runtimeMemoryBytes());
    runtime.put("groups_count", groups.size());
    return n.toString();
  }

  /**
   * A joined user: a virtual thread that takes what its group routes to it from its inbox, keeps
   * the last H in its history and writes each to its connection.
   */
  static final class User {
    /** The inbox's end marker: the connection closed. */
    private static final Object LEFT = new Object();

    final long id;
    final ChatGroup group;
    private final ChatServer server;
    private final WebSocket conn;
    private final int historyLength;
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();

    User(ChatServer server, WebSocket conn, ChatGroup group, long id, int historyLength) {
      this.server = server;
      this.conn = conn;
      this.group = group;
      this.id = id;
      this.historyLength = historyLength;
    }

    /** The group's answer to the join (on the group's thread): null, or why not. */
    void joined(String refused) {
      if (refused != null) {
        refuse(conn, refused);
        return;
      }
      server.connections.incrementAndGet();
      server.startThread(this::run);
      send("{\"joined\":" + id + "}");
    }

    void deliver(Object payload) {
      inbox.add(payload);
    }

    /**
     * On the connection's close, whether or not the group has seen the join yet: the group takes
     * the Join before this Leave, and the thread, if it starts, finds LEFT.
     */
    void leave() {
      group.send(new ChatGroup.Leave(this));
      inbox.add(LEFT);
    }

    private void run() {
      ArrayDeque<Object> history = new ArrayDeque<>(Math.min(historyLength, 16));
      try {
        for (Object payload = inbox.take(); payload != LEFT; payload = inbox.take()) {
          if (historyLength > 0) {
            if (history.size() == historyLength) {
              history.removeFirst();
            }
            history.addLast(payload); // shared with the write below, not copied
          }
          send(payload);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        server.connections.decrementAndGet();
      }
    }

    private void send(Object payload) {
      try {
        if (payload instanceof String text) {
          conn.send(text);
        } else {
          conn.send((byte[]) payload);
        }
      } catch (WebsocketNotConnectedException e) {
        // Closed meanwhile: its LEFT marker is on its way.
      }
    }
  }
}
