//! Delivery latency histograms: log-linear buckets in nanoseconds, at most 0.78 %
//! relative error, fixed memory.
//!
//! Values below 128 ns get one bucket per nanosecond. Above, each power of two
//! [2^e, 2^(e+1)) is split into 64 buckets of width 2^(e-6); a bucket reports its
//! midpoint, at most 2^(e-7) from any value in it, i.e. within 1/128 (0.78 %) of it.
//! The range ends at 2^47 ns (39 hours, more than the longest run: T <= 24 h plus a
//! drain <= 1 h); anything longer lands in the last bucket. The maximum is kept
//! exactly.
//!
//! A client's `LatencyLog` keeps its buckets in 64-bucket chunks, one per power of
//! two, allocated the first time a latency falls in that range: a client whose
//! latencies span three octaves holds three chunks (1.5 KiB), not the whole range
//! (21 KiB), which matters at 100,000 clients. At most `CHUNKS` chunks exist, so the
//! memory is bounded whatever the number of deliveries. After the run the logs are
//! merged into one dense `LatencyHistogram`.

/// Buckets per chunk (per power of two above 64 ns).
const SUB_BUCKETS: usize = 64;
const SUB_BITS: u32 = 6;
/// Chunk 0: [0, 64) ns, width 1; chunk c >= 1: [2^(c+5), 2^(c+6)) ns.
pub const CHUNKS: usize = 42;
/// The highest power of two with its own chunk: [2^46, 2^47) ns.
const TOP_EXPONENT: u32 = (CHUNKS as u32) + 4;

/// Chunk and bucket of a latency in nanoseconds.
fn locate(nanos: u64) -> (usize, usize) {
    if nanos < SUB_BUCKETS as u64 {
        return (0, nanos as usize);
    }
    let exponent = 63 - nanos.leading_zeros();
    if exponent > TOP_EXPONENT {
        return (CHUNKS - 1, SUB_BUCKETS - 1);
    }
    let shift = exponent - SUB_BITS;
    let chunk = (exponent - SUB_BITS + 1) as usize;
    let bucket = ((nanos >> shift) as usize) - SUB_BUCKETS;
    (chunk, bucket)
}

/// The value a bucket reports: its midpoint (its only value when its width is 1).
fn representative(chunk: usize, bucket: usize) -> u64 {
    if chunk == 0 {
        return bucket as u64;
    }
    let shift = chunk as u32 - 1;
    let lower = ((SUB_BUCKETS + bucket) as u64) << shift;
    let width = 1u64 << shift;
    lower + width / 2
}

/// One client's latencies: sparse, bounded (see the module documentation).
#[derive(Debug)]
pub struct LatencyLog {
    chunks: [Option<Box<[u64; SUB_BUCKETS]>>; CHUNKS],
    count: u64,
    max_nanos: u64,
}

impl Default for LatencyLog {
    fn default() -> Self {
        Self {
            chunks: [const { None }; CHUNKS],
            count: 0,
            max_nanos: 0,
        }
    }
}

impl LatencyLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, nanos: u64) {
        let (chunk, bucket) = locate(nanos);
        self.chunks[chunk].get_or_insert_with(|| Box::new([0; SUB_BUCKETS]))[bucket] += 1;
        self.count += 1;
        self.max_nanos = self.max_nanos.max(nanos);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Chunks allocated so far (for the memory test).
    pub fn chunks_in_use(&self) -> usize {
        self.chunks.iter().filter(|chunk| chunk.is_some()).count()
    }
}

/// Every client's latencies merged: dense, built once after the drain.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    max_nanos: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self {
            counts: vec![0; CHUNKS * SUB_BUCKETS],
            count: 0,
            max_nanos: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn merge(&mut self, log: &LatencyLog) {
        for (chunk, counts) in log.chunks.iter().enumerate() {
            if let Some(counts) = counts {
                let dense = &mut self.counts[chunk * SUB_BUCKETS..(chunk + 1) * SUB_BUCKETS];
                for (total, count) in dense.iter_mut().zip(counts.iter()) {
                    *total += count;
                }
            }
        }
        self.count += log.count;
        self.max_nanos = self.max_nanos.max(log.max_nanos);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_nanos(&self) -> u64 {
        self.max_nanos
    }

    /// The q-quantile (0 < q <= 1) in nanoseconds: the bucket holding the
    /// ceil(q * count)-th smallest latency, reported as its midpoint but never above
    /// the exact maximum. 0 when nothing was recorded.
    pub fn quantile_nanos(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let value = representative(index / SUB_BUCKETS, index % SUB_BUCKETS);
                return value.min(self.max_nanos) as f64;
            }
        }
        self.max_nanos as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn every_value_is_within_a_percent_of_its_bucket() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut values: Vec<u64> = (0..300).collect();
        for exponent in 7..47 {
            let low = 1u64 << exponent;
            values.extend([low, low + 1, 2 * low - 1]);
            values.extend((0..200).map(|_| rng.random_range(low..2 * low)));
        }
        for value in values {
            let (chunk, bucket) = locate(value);
            assert!(chunk < CHUNKS && bucket < SUB_BUCKETS, "{value}");
            let shown = representative(chunk, bucket) as f64;
            let error = (shown - value as f64).abs() / (value as f64).max(1.0);
            assert!(error <= 1.0 / 128.0, "{value} shown as {shown}: {error}");
        }
    }

    #[test]
    fn values_beyond_the_range_land_in_the_last_bucket() {
        assert_eq!(locate(u64::MAX), (CHUNKS - 1, SUB_BUCKETS - 1));
        assert_eq!(locate((1 << 47) - 1), (CHUNKS - 1, SUB_BUCKETS - 1));
        assert_eq!(locate(1 << 46).0, CHUNKS - 1);
        let mut log = LatencyLog::new();
        log.record(u64::MAX);
        let mut merged = LatencyHistogram::new();
        merged.merge(&log);
        assert_eq!(merged.max_nanos(), u64::MAX);
    }

    #[test]
    fn quantiles_of_a_uniform_spread() {
        let mut a = LatencyLog::new();
        let mut b = LatencyLog::new();
        for micros in 1..=10_000u64 {
            let log = if micros % 2 == 0 { &mut a } else { &mut b };
            log.record(micros * 1000);
        }
        let mut merged = LatencyHistogram::new();
        merged.merge(&a);
        merged.merge(&b);
        assert_eq!(merged.count(), 10_000);
        for (q, exact) in [(0.5, 5_000_000.0), (0.99, 9_900_000.0), (1.0, 10_000_000.0)] {
            let got = merged.quantile_nanos(q);
            assert!(
                (got - exact).abs() / exact <= 0.01,
                "q {q}: {got} vs {exact}"
            );
        }
        assert_eq!(merged.quantile_nanos(1.0), 10_000_000.0);
        assert_eq!(merged.max_nanos(), 10_000_000);
    }

    #[test]
    fn a_log_allocates_only_the_octaves_it_sees() {
        let mut log = LatencyLog::new();
        assert_eq!(log.chunks_in_use(), 0);
        for nanos in [20_000, 21_000, 30_000, 40_000] {
            log.record(nanos);
        }
        assert_eq!(log.chunks_in_use(), 2);
        assert_eq!(log.count(), 4);
        assert_eq!(LatencyHistogram::new().quantile_nanos(0.5), 0.0);
    }
}
