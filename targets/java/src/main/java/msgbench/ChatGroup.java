package msgbench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A chat server's group (Chut's group process): a virtual thread with an inbox that knows its
 * members and routes each message from one of them to another picked uniformly at random.
 */
final class ChatGroup {
  /** What a group's inbox carries. */
  sealed interface Msg permits Join, Route, Leave {}

  record Join(ChatServer.User user) implements Msg {}

  /** A chat message: a String (text frame) or a byte[] (binary frame), passed on as is. */
  record Route(long from, Object payload) implements Msg {}

  /**
   * The user's connection closed (the user itself: a refused second join of its number must not
   * remove the first).
   */
  record Leave(ChatServer.User user) implements Msg {}

  final LinkedBlockingQueue<Msg> inbox = new LinkedBlockingQueue<>();
  private final Members<ChatServer.User> members;

  ChatGroup(long seed) {
    this.members = new Members<>(seed);
  }

  void send(Msg m) {
    inbox.add(m); // unbounded: never blocks
  }

  /** The group's thread: forever (the server's life). */
  void run() {
    try {
      while (true) {
        Msg m = inbox.take();
        if (m instanceof Route r) {
          ChatServer.User peer = members.pickPeer(r.from());
          if (peer != null) {
            peer.deliver(r.payload());
          }
        } else if (m instanceof Join j) {
          String refused = members.join(j.user().id, j.user());
          j.user().joined(refused);
        } else if (m instanceof Leave l) {
          members.leave(l.user().id, l.user());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A group's members, each found by user number, and the random choice of a peer. */
  static final class Members<T> {
    private final List<Long> ids = new ArrayList<>();
    private final List<T> values = new ArrayList<>();
    private final Map<Long, Integer> index = new HashMap<>();
    private final SplittableRandom rng;

    Members(long seed) {
      rng = new SplittableRandom(seed);
    }

    int size() {
      return ids.size();
    }

    /** null when joined, else why not. */
    String join(long id, T value) {
      if (index.containsKey(id)) {
        return "user " + id + " has already joined this group";
      }
      index.put(id, ids.size());
      ids.add(id);
      values.add(value);
      return null;
    }

    /** Removes member id if it is value (the same object). */
    void leave(long id, T value) {
      Integer at = index.get(id);
      if (at == null || values.get(at) != value) {
        return;
      }
      index.remove(id);
      int last = ids.size() - 1;
      if (at != last) { // move the last member into the gap
        ids.set(at, ids.get(last));
        values.set(at, values.get(last));
        index.put(ids.get(at), at);
      }
      ids.remove(last);
      values.remove(last);
    }

    /** A member other than from, uniformly; null when there is none. */
    T pickPeer(long from) {
      Integer own = index.get(from);
      int n = ids.size();
      if (own == null) { // a sender that already left: any member is another one
        return n == 0 ? null : values.get(rng.nextInt(n));
      }
      if (n < 2) {
        return null;
      }
      int pick = rng.nextInt(n - 1); // among the n - 1 others: skip the sender's own slot
      return values.get(pick >= own ? pick + 1 : pick);
    }
  }
}
