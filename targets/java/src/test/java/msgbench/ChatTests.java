package msgbench;

final class ChatTests {
  private ChatTests() {}
}
