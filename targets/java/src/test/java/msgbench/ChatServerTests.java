package msgbench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import org.java_websocket.WebSocketAdapter;
import org.java_websocket.WebSocketImpl;
import org.java_websocket.WebSocketServerFactory;
import org.java_websocket.drafts.Draft;
import org.java_websocket.server.DefaultWebSocketServerFactory;

/**
 * The chat server (docs/chat-server.md) through the JDK's own WebSocket client, and the chat
 * worker's sample lines. tests/test_chat_server_protocol.py checks the server with Python's
 * websockets too.
 */
final class ChatServerTests {
  private ChatServerTests() {}

  static final long ANSWER_S = 10;

  /** A client connection and what arrived on it (String for text, byte[] for binary). */
  static final class Client implements WebSocket.Listener {
    final LinkedBlockingQueue<Object> received = new LinkedBlockingQueue<>();
    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();
    WebSocket ws;

    static Client connect(int port) throws Exception {
      Client c = new Client();
      c.ws =
          HttpClient.newHttpClient()
              .newWebSocketBuilder()
              .buildAsync(URI.create("ws://127.0.0.1:" + port + "/"), c)
              .get(ANSWER_S, TimeUnit.SECONDS);
      return c;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        received.add(text.toString());
        text.setLength(0);
      }
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      byte[] part = new byte[data.remaining()];
      data.get(part);
      binary.writeBytes(part);
      if (last) {
        received.add(binary.toByteArray());
        binary.reset();
      }
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
      received.add("closed " + code + " " + reason);
      return null;
    }

    Object next() throws InterruptedException {
      Object got = received.poll(ANSWER_S, TimeUnit.SECONDS);
      Tests.check(got != null, "an answer within " + ANSWER_S + " s");
      return got;
    }

    void text(String s) throws Exception {
      ws.sendText(s, true).get(ANSWER_S, TimeUnit.SECONDS);
    }

    JsonNode stats() throws Exception {
      text("{\"stats\": true}");
      return Wire.JSON.readTree((String) next());
    }
  }

  static Client join(int port, long group, long user) throws Exception {
    Client c = Client.connect(port);
    c.text("{\"join\":{\"group\":" + group + ",\"user\":" + user + ",\"history\":2}}");
    Tests.equal(c.next(), "{\"joined\":" + user + "}", "the join's answer");
    return c;
  }

  static void testMessagesReachTheOtherMemberVerbatimAndStatsCountUsers() throws Exception {
    ChatServer server = new ChatServer(new InetSocketAddress("127.0.0.1", 0));
    int port = server.startListening();
    try {
      Client control = Client.connect(port);
      Tests.equal(control.stats().get("connections").asLong(), 0L, "connections before joins");
      Client alice = join(port, 0, 1);
      Client bob = join(port, 0, 2);
      Client carol = join(port, 1, 3);
      String text = "{\"g\":0,\"u\":1,\"t\":5,\"m\":\"hi \u2014 there\"}";
      byte[] binary = {0, 0, 0, 0, 0, 0, 0, 2, (byte) 255, 0, 7};
      alice.text(text);
      bob.ws.sendBinary(ByteBuffer.wrap(binary), true).get(ANSWER_S, TimeUnit.SECONDS);
      // Two members in group 0: each message can only go to the other one.
      Tests.equal(bob.next(), text, "text to bob, verbatim");
      Object got = alice.next();
      Tests.check(got instanceof byte[] b && Arrays.equals(b, binary), "binary to alice: " + got);

      JsonNode stats = control.stats();
      Tests.equal(stats.get("connections").asLong(), 3L, "connections: " + stats);
      // Three users and two groups, each a virtual thread.
      Tests.equal(stats.get("processes").asLong(), 5L, "processes: " + stats);
      Tests.check(
          stats.get("peak_rss_bytes").asLong() >= stats.get("rss_bytes").asLong(), "" + stats);
      Tests.check(stats.get("runtime").get("heap_used_bytes").asLong() > 0, "" + stats);
      Tests.check(stats.get("runtime").get("total_bytes").asLong() > 0, "" + stats);

      // Carol is alone in group 1: her message goes nowhere.
      carol.text("alone");
      Tests.check(alice.received.poll(300, TimeUnit.MILLISECONDS) == null, "alice got a message");

      carol.ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(ANSWER_S, TimeUnit.SECONDS);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_S);
      while (control.stats().get("connections").asLong() != 2) {
        Tests.check(System.nanoTime() < deadline, "carol's close was not counted");
        Thread.sleep(20);
      }
    } finally {
      server.stop(1000);
    }
  }

  /**
   * Java-WebSocket 1.6.0's lost wake-up (ChatServer.WRITE_KICK_MS), made to happen every time. The
   * selector thread writes a connection's queue until it is empty, then sets its interest back to
   * OP_READ; a frame another thread queues in between asks for OP_WRITE first and is then left
   * waiting. Here the selector, right after it has found the queue empty (its last look, at
   * isFlushAndClose), waits while another thread sends a frame. That frame reaches the client only
   * if the server asks for OP_WRITE again by itself.
   */
  static void testAFrameSentAsTheSelectorGoesIdleIsStillWritten() throws Exception {
    ChatServer server = new ChatServer(new InetSocketAddress("127.0.0.1", 0));
    RaceAtIdle race = new RaceAtIdle();
    server.setWebSocketFactory(race);
    int port = server.startListening();
    try {
      Client control = Client.connect(port);
      race.armed = true;
      // The stats answer is written by the selector thread, which then finds the queue empty. The
      // race may also fire at the selector's idle look right after the handshake, before the stats
      // request is read: the two frames can come in either order, and both must come.
      control.text("{\"stats\": true}");
      Tests.check(race.raced.await(ANSWER_S, TimeUnit.SECONDS), "the race was not set up");
      List<Object> frames = List.of(control.next(), control.next());
      Tests.check(frames.contains(RaceAtIdle.LATE), "the frame sent in the race: " + frames);
      Object answer = frames.get(frames.get(0).equals(RaceAtIdle.LATE) ? 1 : 0);
      Tests.check(
          Wire.JSON.readTree((String) answer).has("connections"), "the stats answer: " + frames);
    } finally {
      server.stop(1000);
    }
  }

  /** The library's factory, with connections that race a send against going idle. */
  static final class RaceAtIdle implements WebSocketServerFactory {
    static final String LATE = "sent as the selector went idle";
    private final DefaultWebSocketServerFactory library = new DefaultWebSocketServerFactory();
    final CountDownLatch raced = new CountDownLatch(1);
    volatile boolean armed;

    @Override
    public WebSocketImpl createWebSocket(WebSocketAdapter a, Draft d) {
      return new Connection(a, List.of(d));
    }

    @Override
    public WebSocketImpl createWebSocket(WebSocketAdapter a, List<Draft> drafts) {
      return new Connection(a, drafts);
    }

    @Override
    public ByteChannel wrapChannel(SocketChannel channel, SelectionKey key) throws IOException {
      return library.wrapChannel(channel, key);
    }

    @Override
    public void close() {
      library.close();
    }

    final class Connection extends WebSocketImpl {
      Connection(WebSocketAdapter a, List<Draft> drafts) {
        super(a, drafts);
      }

      /**
       * Asked by the selector thread once it has written the queue empty (and elsewhere): the first
       * such time after the test arms the race, a frame is sent from another thread.
       */
      @Override
      public boolean isFlushAndClose() {
        if (armed
            && outQueue.isEmpty()
            && Thread.currentThread().getName().startsWith("WebSocketSelector")
            && raced.getCount() > 0) {
          Thread sender = Thread.ofPlatform().start(() -> send(LATE));
          try {
            sender.join();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          raced.countDown();
        }
        return super.isFlushAndClose();
      }
    }
  }

  static void testABadFirstFrameIsRefusedWithAReason() throws Exception {
    ChatServer server = new ChatServer(new InetSocketAddress("127.0.0.1", 0));
    int port = server.startListening();
    try {
      Client c = Client.connect(port);
      c.text("hello");
      Object got = c.next();
      Tests.check(
          got instanceof String s && s.startsWith("closed 1008") && s.contains("not JSON"),
          "a close frame naming the fault, got " + got);
    } finally {
      server.stop(1000);
    }
  }

  static void testBadArgumentsNameTheValueAndWhatIsAccepted() throws Exception {
    String[][] cases = {
      {"--listen", "localhost:1"}, {"--port", "1"}, {}, {"--listen", "1.2.3.4:x"}
    };
    String[] mentions = {"\"localhost:1\"", "--listen HOST:PORT", "required", "\"1.2.3.4:x\""};
    for (int i = 0; i < cases.length; i++) {
      try {
        ChatServer.parseArgs(cases[i]);
        throw new AssertionError("accepted " + Arrays.toString(cases[i]));
      } catch (IllegalArgumentException e) {
        Tests.check(e.getMessage().contains(mentions[i]), e.getMessage());
      }
    }
    Tests.equal(
        ChatServer.parseArgs(new String[] {"--listen", "0.0.0.0:0"}).getPort(), 0, "port 0");
  }

  static void testMembersNeverPickTheSenderAndReachEveryOther() {
    ChatGroup.Members<Long> m = new ChatGroup.Members<>(7);
    for (long u = 10; u < 15; u++) {
      Tests.equal(m.join(u, u), null, "join " + u);
    }
    Tests.check(m.join(12, 12L).contains("user 12"), "a second join of 12 is refused");
    int[] seen = new int[5];
    for (int i = 0; i < 2000; i++) {
      long peer = m.pickPeer(12);
      Tests.check(peer != 12, "picked the sender");
      seen[(int) (peer - 10)]++;
    }
    for (int i = 0; i < 5; i++) { // uniform over 4 others: ~500 each
      Tests.check(i == 2 ? seen[i] == 0 : seen[i] > 300, Arrays.toString(seen));
    }
    m.leave(12, 99L); // not the member joined as 12: a refused second join's leaving
    Tests.equal(m.size(), 5, "a stranger's leave removes nobody");
    m.leave(10, 10L); // 14 moves into 10's slot
    m.leave(11, 11L);
    m.leave(13, 13L);
    Tests.equal(m.size(), 2, "members left");
    Tests.equal(m.pickPeer(14), 12L, "the only other");
    Tests.equal(m.pickPeer(12), 14L, "the only other");
    m.leave(14, 14L);
    Tests.equal(m.pickPeer(12), null, "alone");
  }

  static void testChatWritesSamplesOfItselfBetweenHelloAndResult() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Wire out = new Wire(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    Request req =
        Tests.request("chat", "{\"model\":\"virtual\"}", ChatTests.params(1.3, 0, 0, "text"));
    Wire.Result r = Tests.serveSampled(req, out);
    Tests.check(r.verify.get("received") > 0, "the chat ran: " + r.verify);
    List<JsonNode> samples = new ArrayList<>();
    for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
      samples.add(Wire.JSON.readTree(line));
    }
    // At the start, at about 1 s, and after the drain (a slow machine may add more).
    Tests.check(samples.size() >= 2, "samples: " + samples);
    double last = -1;
    for (JsonNode s : samples) {
      Tests.equal(s.get("type").asText(), "sample", "" + s);
      Tests.check(s.get("t_ms").asDouble() >= last, "t_ms goes forward: " + samples);
      last = s.get("t_ms").asDouble();
      JsonNode v = s.get("values");
      Tests.check(
          v.get("rss_bytes").asLong() > 0 && v.get("heap_committed_bytes").asLong() > 0, "" + s);
      v.fieldNames()
          .forEachRemaining(
              name ->
                  Tests.check(
                      name.matches("[a-z][a-z0-9_]*_(bytes|count|ns|ms|percent|per_s)"), name));
    }
    Tests.check(last >= 1300, "the last sample comes after the run: " + samples);

    bytes.reset();
    Tests.serveSampled(Tests.request("ring", "{}", "{\"n\":10,\"m\":2,\"payload\":\"BOO!\"}"), out);
    Tests.equal(bytes.size(), 0, "ring writes no samples");
  }
}
