package msgbench;

final class Chat {
  private Chat() {}

  static Wire.Result measure(Request req, Model model) throws WorkerError {
    throw WorkerError.unsupported("todo");
  }
}
