package msgbench;

import java.util.Map;
import java.util.Set;
import msgbench.kit.Worker;

/**
 * The java target's worker on kits/java's Worker: its workloads (chat writes sample lines), the
 * socket workload's server half (--serve) and the chat server kind's server (--chat-server).
 */
public final class Main {
  static final Worker.Target TARGET =
      new Worker.Target(
          "java",
          Map.of(
              "ring", Ring::measure,
              "fanin", Fanin::measure,
              "chat", Chat::measure,
              "socket", SocketClient::measure),
          Set.of("chat"),
          Map.of("--serve", SocketServer::serveStdio, "--chat-server", ChatServer::run));

  private Main() {}

  public static void main(String[] args) {
    Worker.main(TARGET, args);
  }
}
