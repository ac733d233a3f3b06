package msgbench;

/** An error the worker reports as its one error line: kind is unsupported, resource or internal. */
final class WorkerError extends Exception {
  private static final long serialVersionUID = 1L;

  static final String UNSUPPORTED = "unsupported";
  static final String RESOURCE = "resource";
  static final String INTERNAL = "internal";

  final String kind;

  WorkerError(String kind, String message) {
    super(message);
    this.kind = kind;
  }

  static WorkerError unsupported(String message) {
    return new WorkerError(UNSUPPORTED, message);
  }

  static WorkerError resource(String message) {
    return new WorkerError(RESOURCE, message);
  }

  static WorkerError internal(String message) {
    return new WorkerError(INTERNAL, message);
  }
}
