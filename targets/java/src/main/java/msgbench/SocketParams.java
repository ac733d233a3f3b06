package msgbench;

import java.util.Set;
import msgbench.kit.Model;
import msgbench.kit.Proc;
import msgbench.kit.Request;
import msgbench.kit.WorkerError;

/** The socket parameters (spec/workloads/socket.json) and the frames both ends agree on. */
final class SocketParams {
  static final Set<String> OPTIONS = Set.of("model", "warmup_iterations");

  /** Every message is a 4-byte big-endian length and size bytes, all of one value. */
  static final int HEADER = 4;

  /** The flow server's one-byte answer once it has read everything. */
  static final int ACK = 0x06;

  /** A connection may make no progress for this long (read timeouts; the accept's too). */
  static final int IO_IDLE_MS = 60_000;

  /** Buffered reads on each end: a read(2) takes what the kernel has, up to this much. */
  static final int READ_BUFFER = 64 << 10;

  /** The flow server reads a large payload in pieces of at most this much. */
  static final int DISCARD_CHUNK = 1 << 20;

  /** The fill value cycles through at most this many values (message i holds i mod 251). */
  static final int MAX_VALUES = 251;

  /** The prepared frames take at most this much unless two frames alone need more. */
  static final long FRAMES_BUDGET = 64 << 20;

  final boolean flow;
  final int size;
  final long totalBytes;
  final int sockets;
  final boolean remote;
  final boolean checkContent;
  final int port;

  /** Echo's offered round trips per second, all sockets together; 0 = closed loop. */
  final double rate;

  final Model model;

  SocketParams(Request req) throws WorkerError {
    req.onlyOptions(OPTIONS);
    flow = req.stringParam("mode").equals("flow");
    size = (int) req.longParam("size");
    totalBytes = req.longParam("total_bytes");
    sockets = (int) req.longParam("sockets");
    remote = req.stringParam("placement").equals("remote");
    checkContent = req.longParam("check_content") == 1;
    port = (int) req.longParam("port");
    // Sent only when > 0 (spec: omit_at_default); the harness checked that it goes with echo.
    rate = req.params.has("rate") ? req.doubleParam("rate") : 0;
    model = Model.of(req);
    if (req.stringParam("data").equals("list")) {
      throw WorkerError.unsupported(
          "data = \"list\" is an Erlang notion (lists of bytes on a socket); java sends "
              + "byte arrays only: use data = \"binary\"");
    }
    if (model == Model.PEKKO) {
      throw WorkerError.unsupported("socket is not implemented for the pekko model");
    }
  }

  /** Messages per socket: total_bytes / size, at least one. */
  long messages() {
    return Math.max(1, totalBytes / size);
  }

  /** Whether echo runs in open loop: a writer and a reader per socket. */
  boolean paced() {
    return rate > 0;
  }

  String mode() {
    return flow ? "flow" : "echo";
  }

  /** How many distinct frames the client prepares. */
  static int frameCount(long size, long messages) {
    return (int)
        Math.min(messages, Math.min(MAX_VALUES, Math.max(2, FRAMES_BUDGET / (size + HEADER))));
  }

  /** The prepared frames: frame v is the header and size bytes of value v. */
  static byte[][] frames(int size, long messages) {
    byte[][] frames = new byte[frameCount(size, messages)][];
    for (int v = 0; v < frames.length; v++) {
      byte[] f = new byte[HEADER + size];
      f[0] = (byte) (size >>> 24);
      f[1] = (byte) (size >>> 16);
      f[2] = (byte) (size >>> 8);
      f[3] = (byte) size;
      java.util.Arrays.fill(f, HEADER, f.length, (byte) v);
      frames[v] = f;
    }
    return frames;
  }

  /**
   * Refuses buffers that cannot fit in the memory available now, and platform threads
   * (threadsPerSocket per socket) beyond the kernel's limits.
   */
  static void checkMemory(
      SocketParams p, long fixed, long perSocket, int threadsPerSocket, String who)
      throws WorkerError {
    long available = Proc.availableBytes();
    long need = fixed + p.sockets * perSocket;
    if (available > 0 && need > available) {
      throw WorkerError.resource(
          "the "
              + who
              + " needs about "
              + (need >> 20)
              + " MiB of buffers for sockets = "
              + p.sockets
              + " of size = "
              + p.size
              + " ("
              + p.mode()
              + "), more than the "
              + (available >> 20)
              + " MiB available");
    }
    if (p.model.platform()) {
      Proc.checkPlatformThreads((long) threadsPerSocket * p.sockets + 1);
    }
  }
}
