package msgbench.kit;

/** An error the worker reports as its one error line: kind is unsupported, resource or internal. */
public final class WorkerError extends Exception {
  private static final long serialVersionUID = 1L;

  public static final String UNSUPPORTED = "unsupported";
  public static final String RESOURCE = "resource";
  public static final String INTERNAL = "internal";

  public final String kind;

  public WorkerError(String kind, String message) {
    super(message);
    this.kind = kind;
  }

  public static WorkerError unsupported(String message) {
    return new WorkerError(UNSUPPORTED, message);
  }

  public static WorkerError resource(String message) {
    return new WorkerError(RESOURCE, message);
  }

  public static WorkerError internal(String message) {
    return new WorkerError(INTERNAL, message);
  }
}
