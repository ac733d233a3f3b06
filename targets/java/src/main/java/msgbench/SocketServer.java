package msgbench;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import msgbench.kit.Request;
import msgbench.kit.Wire;
import msgbench.kit.WorkerError;

/**
 * The socket workload's server half (target.toml serve, spec/README.md "Peers"): reads the worker's
 * request on stdin, listens, serves `sockets` connections with one thread each, says what it
 * received and exits; it also ends when its stdin closes.
 */
final class SocketServer {
  private SocketServer() {}

  /** One connection's count, or its failure. */
  record Served(long messages, long bytes, String failure) {}

  /**
   * The command line after --serve (nothing): serves the request on stdin; 0, or 2 on arguments.
   */
  static int serveStdio(String[] args) {
    if (args.length > 0) {
      System.err.println(
          "msgbench-java --serve: unexpected arguments "
              + String.join(" ", args)
              + "; it takes none (the request comes on stdin)");
      return 2;
    }
    Wire out = Wire.stdout();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      String line = in.readLine();
      if (line == null || line.isBlank()) {
        throw WorkerError.internal("the server read no request on its stdin");
      }
      Request req = Request.parse(line);
      if (!req.workload.equals("socket")) {
        throw WorkerError.unsupported(
            "the server half serves workload \"socket\" only, not \"" + req.workload + "\"");
      }
      SocketParams p = new SocketParams(req);
      BlockingQueue<Served> results = new LinkedBlockingQueue<>();
      Thread watcher =
          new Thread(
              () -> {
                try {
                  while (in.read() >= 0) {
                    // the worker keeps stdin open while it needs the server
                  }
                } catch (IOException e) {
                  // a broken stdin is a closed one
                }
                results.add(new Served(0, 0, "stdin"));
              });
      watcher.setDaemon(true);
      watcher.start();
      serve(p, out, results);
    } catch (WorkerError e) {
      out.error(e);
    } catch (IOException e) {
      out.error(WorkerError.internal("the server: " + e));
    } catch (InterruptedException e) {
      out.error(WorkerError.internal("the server was interrupted"));
    }
    return 0;
  }

  /** Listens, accepts and serves p.sockets connections, then says what they received. */
  static void serve(SocketParams p, Wire out, BlockingQueue<Served> results)
      throws WorkerError, InterruptedException {
    long perSocket =
        p.flow
            ? SocketParams.READ_BUFFER + Math.min(p.size, SocketParams.DISCARD_CHUNK)
            : SocketParams.READ_BUFFER + SocketParams.HEADER + (long) p.size;
    SocketParams.checkMemory(p, 0, perSocket, 1, "server");
    ServerSocket listener = listen(p);
    List<Socket> conns = new CopyOnWriteArrayList<>();
    ThreadFactory threads = p.model.threads("serve-");
    Thread acceptor = threads.newThread(() -> accept(p, listener, threads, conns, results));
    out.listening(listener.getLocalPort());
    acceptor.start();
    try {
      tally(p, out, results);
    } finally {
      close(listener);
      for (Socket c : conns) {
        close(c);
      }
    }
  }

  /** The listening socket on p.port; a resource error when the port is taken. */
  static ServerSocket listen(SocketParams p) throws WorkerError {
    try {
      ServerSocket listener = new ServerSocket();
      listener.setReuseAddress(true);
      listener.bind(new InetSocketAddress("0.0.0.0", p.port), Math.max(50, p.sockets));
      listener.setSoTimeout(SocketParams.IO_IDLE_MS);
      return listener;
    } catch (BindException e) {
      throw WorkerError.resource(
          "port "
              + p.port
              + " is in use ("
              + e.getMessage()
              + "): give another port, or port = 0 for any free one");
    } catch (IOException e) {
      throw WorkerError.resource("the server cannot listen on port " + p.port + ": " + e);
    }
  }

  /** Accepts p.sockets connections, each served by a thread of its own into results. */
  static void accept(
      SocketParams p,
      ServerSocket listener,
      ThreadFactory threads,
      List<Socket> conns,
      BlockingQueue<Served> results) {
    for (int k = 1; k <= p.sockets; k++) {
      Socket c;
      try {
        c = listener.accept();
      } catch (SocketTimeoutException e) {
        results.add(
            new Served(
                0,
                0,
                "the server accepted "
                    + (k - 1)
                    + " of "
                    + p.sockets
                    + " connections within "
                    + SocketParams.IO_IDLE_MS / 1000
                    + " s"));
        return;
      } catch (IOException e) {
        results.add(new Served(0, 0, "accept: " + e));
        return;
      }
      conns.add(c);
      int id = k;
      threads.newThread(() -> results.add(serveConn(id, c, p))).start();
    }
    close(listener);
  }

  /** Adds up every connection's count, or fails with the first failure; then the served line. */
  static void tally(SocketParams p, Wire out, BlockingQueue<Served> results)
      throws WorkerError, InterruptedException {
    long messages = 0;
    long bytes = 0;
    for (int done = 0; done < p.sockets; done++) {
      Served s = results.take();
      if ("stdin".equals(s.failure)) {
        throw WorkerError.internal(
            "the server's stdin closed before its work was done ("
                + done
                + " of "
                + p.sockets
                + " connections finished)");
      }
      if (s.failure != null) {
        throw WorkerError.internal(s.failure);
      }
      messages += s.messages;
      bytes += s.bytes;
    }
    out.served(messages, bytes);
  }

  static void close(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // closing is best effort
    }
  }

  /** Serves one connection: echo every frame back, or read and discard them and ack at the end. */
  static Served serveConn(int k, Socket c, SocketParams p) {
    long messages = 0;
    long bytes = 0;
    try (c) {
      c.setTcpNoDelay(true);
      c.setSoTimeout(SocketParams.IO_IDLE_MS);
      DataInputStream in =
          new DataInputStream(
              new BufferedInputStream(c.getInputStream(), SocketParams.READ_BUFFER));
      OutputStream out = c.getOutputStream();
      byte[] frame =
          new byte
              [p.flow
                  ? Math.min(p.size, SocketParams.DISCARD_CHUNK)
                  : SocketParams.HEADER + p.size];
      while (true) {
        int n;
        try {
          n = in.readInt();
        } catch (EOFException e) {
          break; // the client is done
        }
        if (n != p.size) {
          return new Served(
              messages,
              bytes,
              "socket " + k + ": a frame of " + n + " bytes arrived; size is " + p.size);
        }
        if (p.flow) {
          for (int left = p.size; left > 0; ) {
            int chunk = Math.min(left, frame.length);
            in.readFully(frame, 0, chunk);
            left -= chunk;
          }
        } else {
          frame[0] = (byte) (n >>> 24);
          frame[1] = (byte) (n >>> 16);
          frame[2] = (byte) (n >>> 8);
          frame[3] = (byte) n;
          in.readFully(frame, SocketParams.HEADER, p.size);
          out.write(frame);
        }
        messages++;
        bytes += p.size;
      }
      if (p.flow) {
        out.write(SocketParams.ACK);
        out.flush();
      }
      return new Served(messages, bytes, null);
    } catch (SocketTimeoutException e) {
      return new Served(
          messages,
          bytes,
          "socket "
              + k
              + " made no progress for "
              + SocketParams.IO_IDLE_MS / 1000
              + " s after "
              + messages
              + " messages");
    } catch (IOException e) {
      return new Served(
          messages, bytes, "socket " + k + " failed after " + messages + " messages: " + e);
    }
  }
}
