package msgbench.kit;

import java.util.ArrayList;
import java.util.List;

/**
 * Latencies (ns) counted in the harness's layout (msgbench/histogram.py): v below 128 is its own
 * bucket; else shift = bit_length(v) - 7 and index = shift * 64 + (v >> shift). Buckets are kept in
 * chunks of 64, each allocated when it gets its first value, so an idle client holds a few bytes
 * and a busy one the chunks its latencies span.
 */
public final class Histogram {
  public static final int SUB = 64;
  public static final int LARGEST = index(Long.MAX_VALUE);

  private final long[][] chunks = new long[LARGEST / SUB + 1][];
  private long count;
  private long max;

  /** The bucket of v ns; negative values count as 0. */
  public static int index(long v) {
    if (v < 2 * SUB) {
      return (int) Math.max(v, 0);
    }
    int shift = (64 - Long.numberOfLeadingZeros(v)) - 7;
    return shift * SUB + (int) (v >>> shift);
  }

  public void record(long v) {
    int i = index(v);
    long[] chunk = chunks[i / SUB];
    if (chunk == null) {
      chunk = new long[SUB];
      chunks[i / SUB] = chunk;
    }
    chunk[i % SUB]++;
    count++;
    max = Math.max(max, v);
  }

  public void merge(Histogram other) {
    for (int c = 0; c < chunks.length; c++) {
      long[] theirs = other.chunks[c];
      if (theirs == null) {
        continue;
      }
      if (chunks[c] == null) {
        chunks[c] = new long[SUB];
      }
      for (int j = 0; j < SUB; j++) {
        chunks[c][j] += theirs[j];
      }
    }
    count += other.count;
    max = Math.max(max, other.max);
  }

  public long count() {
    return count;
  }

  /** The largest value recorded, exact; 0 without values. */
  public long max() {
    return max;
  }

  /** [bucket, count] pairs with count > 0, by bucket. */
  public long[][] sparse() {
    List<long[]> pairs = new ArrayList<>();
    for (int c = 0; c < chunks.length; c++) {
      if (chunks[c] == null) {
        continue;
      }
      for (int j = 0; j < SUB; j++) {
        if (chunks[c][j] > 0) {
          pairs.add(new long[] {(long) c * SUB + j, chunks[c][j]});
        }
      }
    }
    return pairs.toArray(new long[0][]);
  }
}
