package msgbench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicReference;
import msgbench.kit.Histogram;
import msgbench.kit.Pacer;
import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * The socket workload (seed 002): echo round trips and flow bandwidth over TCP between this worker
 * (the client, one thread per socket) and its server half, a separate JVM.
 */
final class SocketClient {
  static final int CONNECT_WITHIN_MS = 30_000;

  /** One socket's client thread's state, counted while it works. */
  static final class Client {
    final int k;
    final Socket socket;
    final DataInputStream in;
    final OutputStream out;
    long sent;
    long sentBytes;
    long received;
    long receivedBytes;
    long mismatches;
    long elapsed;

    /** Open loop: each round trip from its message's due time, ns. */
    final Histogram latency = new Histogram();

    Client(int k, Socket socket) throws IOException {
      this.k = k;
      this.socket = socket;
      this.in =
          new DataInputStream(
              new BufferedInputStream(socket.getInputStream(), SocketParams.READ_BUFFER));
      this.out = socket.getOutputStream(); // unbuffered: one write(2) per frame
    }

    /** One message at a time; the next is sent when its echo is back whole. */
    void echo(SocketParams p, long messages, byte[][] frames) throws IOException, WorkerError {
      byte[] payload = new byte[p.size];
      long start = Proc.now();
      for (long i = 0; i < messages; i++) {
        byte[] frame = frames[(int) (i % frames.length)];
        out.write(frame);
        sent++;
        sentBytes += p.size;
        receive(p, i, frame, payload);
      }
      elapsed = Proc.now() - start;
    }

    /**
     * Open loop: a writer thread of the model sends message i at its due time (rate / sockets per
     * second from this socket's first send) without waiting for echoes; this thread reads the
     * echoes in order, checks each as echo does and times it from its message's due time.
     */
    void echoPaced(SocketParams p, long messages, byte[][] frames, ThreadFactory threads)
        throws IOException, WorkerError, InterruptedException {
      byte[] payload = new byte[p.size];
      // The writer's schedule, from its first send (so its thread's start is not charged).
      AtomicReference<Pacer> schedule = new AtomicReference<>();
      AtomicReference<IOException> writeFailure = new AtomicReference<>();
      Thread writer = threads.newThread(() -> write(p, messages, frames, schedule, writeFailure));
      writer.start();
      try {
        Pacer pacer = null;
        long now = 0;
        for (long i = 0; i < messages; i++) {
          receive(p, i, frames[(int) (i % frames.length)], payload);
          now = Proc.now();
          if (pacer == null) { // echo 0 is back, so message 0 was sent: the schedule is set
            pacer = schedule.get();
          }
          latency.record(now - pacer.due(i));
        }
        elapsed = now - schedule.get().due(0); // first send to last echo
      } catch (IOException | WorkerError | RuntimeException e) {
        // Read before stopping the writer: a write that fails after this close is no cause.
        IOException cause = writeFailure.get();
        writer.interrupt(); // a writer waiting for its next due time stops there
        SocketServer.close(socket); // one blocked in a write fails at once
        writer.join();
        if (cause != null) { // the reader failed because the writer had (it closed the socket)
          cause.addSuppressed(e);
          throw cause;
        }
        throw e;
      }
      writer.join(); // every echo is back: the writer has sent its last message
    }

    /** The open loop's writer: each frame at its due time, at once when late, never skipped. */
    private void write(
        SocketParams p,
        long messages,
        byte[][] frames,
        AtomicReference<Pacer> schedule,
        AtomicReference<IOException> failure) {
      Pacer pacer = new Pacer(Proc.now(), p.rate / p.sockets);
      schedule.set(pacer);
      try {
        for (long i = 0; i < messages; i++) {
          Pacer.waitUntil(pacer.due(i));
          out.write(frames[(int) (i % frames.length)]);
          sent++;
          sentBytes += p.size;
        }
      } catch (IOException e) {
        failure.set(e);
        SocketServer.close(socket); // the reader, waiting for an echo that cannot come, fails now
      } catch (InterruptedException e) {
        // the reader failed first and stopped this writer
      }
    }

    /** Reads echo i of frame and checks it: its framing, and its content or its ends. */
    private void receive(SocketParams p, long i, byte[] frame, byte[] payload)
        throws IOException, WorkerError {
      int n = in.readInt();
      if (n != p.size) {
        throw WorkerError.internal(
            "socket "
                + k
                + ": the echo of message "
                + (i + 1)
                + " is framed as "
                + n
                + " bytes, not "
                + p.size);
      }
      in.readFully(payload);
      received++;
      receivedBytes += p.size;
      if (p.checkContent) {
        if (!Arrays.equals(payload, 0, p.size, frame, SocketParams.HEADER, frame.length)) {
          mismatches++;
        }
      } else if (payload[0] != frame[SocketParams.HEADER]
          || payload[p.size - 1] != frame[frame.length - 1]) {
        mismatches++;
      }
    }

    /** Every frame as fast as the connection takes them; then shutdown and the server's ack. */
    void flow(SocketParams p, long messages, byte[][] frames) throws IOException, WorkerError {
      long start = Proc.now();
      for (long i = 0; i < messages; i++) {
        out.write(frames[(int) (i % frames.length)]);
        sent++;
        sentBytes += p.size;
      }
      socket.shutdownOutput();
      int ack = in.read();
      elapsed = Proc.now() - start;
      if (ack != SocketParams.ACK) {
        throw WorkerError.internal(
            "socket " + k + ": the server acked with " + ack + ", not " + SocketParams.ACK);
      }
    }
  }

  private SocketClient() {}

  static Wire.Result measure(Request req) throws WorkerError, InterruptedException {
    SocketParams p = new SocketParams(req);
    long messages = p.messages();
    long fixed = (long) SocketParams.frameCount(p.size, messages) * (SocketParams.HEADER + p.size);
    SocketParams.checkMemory(
        p,
        fixed,
        SocketParams.READ_BUFFER + (p.flow ? 0 : p.size),
        p.paced() ? 2 : 1, // in open loop a writer thread beside each socket's reader
        "client");
    byte[][] frames = SocketParams.frames(p.size, messages);
    List<Client> clients = new ArrayList<>();
    long wall;
    JsonNode served;
    try (Peer server = Peer.start(p, req.line)) {
      int port = server.next("listening", Peer.LISTENING_WITHIN_S).path("port").asInt();
      try {
        connect(p, server.host, port, clients);
        wall = run(p, messages, frames, clients, server);
      } finally {
        for (Client c : clients) {
          SocketServer.close(c.socket);
        }
      }
      served = server.next("served", Peer.SERVED_WITHIN_S);
      server.awaitExit();
    }
    return report(p, clients, wall, served);
  }

  /** Opens p.sockets connections to the server at host:port into clients. */
  static void connect(SocketParams p, String host, int port, List<Client> clients)
      throws WorkerError {
    for (int k = 1; k <= p.sockets; k++) {
      Socket s = new Socket();
      try {
        s.connect(new InetSocketAddress(host, port), CONNECT_WITHIN_MS);
        // Without it one message in flight meets Nagle's algorithm and delayed ACKs.
        s.setTcpNoDelay(true);
        s.setSoTimeout(SocketParams.IO_IDLE_MS);
      } catch (IOException e) {
        SocketServer.close(s);
        throw WorkerError.internal(
            "cannot connect socket "
                + k
                + " of "
                + p.sockets
                + " to the server at "
                + host
                + ":"
                + port
                + ": "
                + e.getMessage());
      }
      try {
        clients.add(new Client(k, s));
      } catch (IOException e) {
        SocketServer.close(s);
        throw WorkerError.internal("socket " + k + ": " + e);
      }
    }
  }

  /** The result: every connection's counts; in flow what arrived is the server's count. */
  static Wire.Result report(SocketParams p, List<Client> clients, long wall, JsonNode served)
      throws WorkerError {
    long[] elapsed = new long[clients.size()];
    long sent = 0;
    long sentBytes = 0;
    long received = 0;
    long receivedBytes = 0;
    long mismatches = 0;
    Histogram latency = new Histogram();
    for (int i = 0; i < elapsed.length; i++) {
      Client c = clients.get(i);
      latency.merge(c.latency);
      elapsed[i] = c.elapsed;
      sent += c.sent;
      sentBytes += c.sentBytes;
      received += c.received;
      receivedBytes += c.receivedBytes;
      mismatches += c.mismatches;
    }
    if (p.flow) { // what arrived is counted at the server in flow
      received = served.path("messages").asLong();
      receivedBytes = served.path("bytes").asLong();
    }
    Wire.Result r = new Wire.Result();
    r.measured.put("elapsed_ns", elapsed);
    r.measured.put("wall_ns", wall);
    r.measured.put("peak_rss_bytes", Proc.peakRssBytes());
    r.verify.put("messages_sent", sent);
    r.verify.put("messages_received", received);
    r.verify.put("bytes_sent", sentBytes);
    r.verify.put("bytes_received", receivedBytes);
    r.verify.put("content_mismatches", mismatches);
    if (p.paced()) {
      r.measured.put("latency_max_ns", latency.max());
      r.histograms.put("latency_ns", latency.sparse());
    }
    return r;
  }

  /** Releases one thread per connection at once and waits for all; the wall time of the whole. */
  static long run(SocketParams p, long messages, byte[][] frames, List<Client> clients, Peer server)
      throws WorkerError, InterruptedException {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(clients.size());
    AtomicReference<Object> failure = new AtomicReference<>();
    ThreadFactory threads = p.model.threads("client-");
    ThreadFactory writers = p.model.threads("writer-");
    for (Client c : clients) {
      threads
          .newThread(
              () -> {
                try {
                  release.await();
                  if (p.flow) {
                    c.flow(p, messages, frames);
                  } else if (p.paced()) {
                    c.echoPaced(p, messages, frames, writers);
                  } else {
                    c.echo(p, messages, frames);
                  }
                } catch (WorkerError e) {
                  fail(failure, e, clients);
                } catch (SocketTimeoutException e) {
                  fail(
                      failure,
                      WorkerError.internal(
                          "socket "
                              + c.k
                              + " made no progress for "
                              + SocketParams.IO_IDLE_MS / 1000
                              + " s after "
                              + (p.flow ? c.sent : c.received)
                              + " of "
                              + messages
                              + " messages"),
                      clients);
                } catch (IOException e) {
                  fail(
                      failure,
                      "the server closed socket "
                          + c.k
                          + " after "
                          + (p.flow ? c.sent : c.received)
                          + " of "
                          + messages
                          + " messages ("
                          + e
                          + ")",
                      clients);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } finally {
                  done.countDown();
                }
              })
          .start();
    }
    System.gc(); // the buffers' garbage, not the sequence's
    long start = Proc.now();
    release.countDown();
    done.await();
    long wall = Proc.now() - start;
    Object f = failure.get();
    if (f instanceof WorkerError e) {
      throw e;
    }
    if (f != null) {
      WorkerError why = server.explanation(2000);
      throw why != null ? why : WorkerError.internal((String) f);
    }
    return wall;
  }

  /** The first failure is the story; closing every connection ends the others at once. */
  static void fail(AtomicReference<Object> failure, Object why, List<Client> clients) {
    if (failure.compareAndSet(null, why)) {
      for (Client c : clients) {
        SocketServer.close(c.socket);
      }
    }
  }
}
