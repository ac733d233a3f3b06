package msgbench;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import msgbench.kit.Worker;

/**
 * The java target's worker: its workloads on kits/java's Worker, which speaks the protocol. With
 * --serve it is the socket workload's server half; with --chat-server the chat server kind's server
 * (ChatServer); with --version it prints the JVM.
 */
public final class Main {
  static final String TARGET = "java";

  static final Map<String, Worker.Workload> WORKLOADS =
      Map.of(
          "ring", Ring::measure,
          "fanin", Fanin::measure,
          "chat", Chat::measure,
          "socket", SocketClient::measure);

  /** chat's time series (RSS and the JVM's view); the other workloads stay unperturbed. */
  static final Set<String> SAMPLED = Set.of("chat");

  private Main() {}

  public static void main(String[] args) throws java.io.IOException {
    if (args.length == 0) {
      Worker.main(TARGET, WORKLOADS, SAMPLED);
    } else if (args.length == 1 && args[0].equals("--version")) {
      System.out.println(Worker.runtimeVersion());
    } else if (args.length == 1 && args[0].equals("--serve")) {
      SocketServer.serveStdio();
      System.exit(0);
    } else if (args[0].equals("--chat-server")) {
      System.exit(ChatServer.run(Arrays.copyOfRange(args, 1, args.length)));
    } else {
      System.err.println(
          "usage: msgbench-java [--serve | --version | --chat-server --listen HOST:PORT]");
      System.exit(2);
    }
  }
}
