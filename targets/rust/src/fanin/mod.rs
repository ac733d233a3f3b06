//! The fanin workload (seed 000, after the OTP suite parallel_messages_SUITE):
//! N senders send to one receiver for duration_ms through one bounded channel.
//!
//! Both implementations (`tasks`: tokio, `threads`: std threads) follow the suite:
//! the senders are created and wait; the coordinator takes t_start and releases
//! them; each sender picks a signal at random with the mix's probabilities, sends
//! a fresh copy of its payload, then checks the stop flag, after every send; after
//! duration_ms the coordinator raises the flag; each sender reports its count to the
//! coordinator and sends an end marker to the receiver; the coordinator takes
//! t_senders_stopped when all have reported; the receiver counts what it gets and
//! takes t_last_receive when it has seen every end marker.

pub mod mix;
mod tasks;
mod threads;

use crate::variant::{Scheduler, Variant, Workload};
use mix::Mix;
use msgbench_kit::measure::{nanos, peak_rss_bytes};
use msgbench_kit::params::ParamReader;
use msgbench_kit::protocol::{Measurement, Request, WorkerError};
use serde_json::{Map, Value};
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

const BYTES_PER_MB: u64 = 1024 * 1024;

const PARAM_NAMES: [&str; 5] = ["senders", "duration_ms", "mix", "method", "memory_limit_mb"];

/// Signals the channel holds before senders wait: the bound that keeps the
/// receiver's backlog from exhausting memory. Chosen by measurement (README.md):
/// 64 to 1024 performed alike; much larger buffers were slower with big payloads,
/// whose backlog then no longer fits in the caches.
pub const CHANNEL_CAPACITY: usize = 256;

/// Bytes one queued signal may take besides its payload: the channel slot and the
/// allocator's header for the payload's heap block.
const SIGNAL_OVERHEAD_BYTES: u64 = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct FaninParams {
    pub senders: u64,
    pub duration: Duration,
    pub mix: Mix,
    pub memory_limit_mb: u64,
}

impl FaninParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("fanin", params, &PARAM_NAMES)?;
        // "method" is the harness's: it derives both methods' throughput from the
        // raw times this worker reports.
        let senders = reader.integer("senders")?;
        let duration_ms = reader.integer("duration_ms")?;
        let mix = Mix::from_json(reader.value("mix")?)?;
        let memory_limit_mb = reader.integer("memory_limit_mb")?;
        Ok(Self {
            senders,
            duration: Duration::from_millis(duration_ms),
            mix,
            memory_limit_mb,
        })
    }
}

/// What flows through the channel to the receiver.
#[derive(Debug)]
enum Signal {
    /// A message: the sender's own copy of a payload of `size` words.
    Message(Vec<u64>),
    /// A sender has stopped; the receiver waits for one per sender.
    End,
}

/// What one run measured, with the counts its tasks counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaninRun {
    /// t_start to t_senders_stopped.
    pub send_time: Duration,
    /// t_start to t_last_receive.
    pub receive_time: Duration,
    /// CPU time of the whole process from t_start until both ends are in.
    pub cpu: Duration,
    /// Summed from the senders' own reports.
    pub sent_messages: u64,
    /// Counted by the receiver.
    pub received_messages: u64,
    pub receiver_alive: bool,
}

/// Runs one measurement with the variant's scheduler.
pub fn run(request: &Request) -> Result<Measurement, WorkerError> {
    measure(
        Variant::from_options(Workload::Fanin, &request.options)?,
        &FaninParams::from_json(&request.params)?,
    )
}

/// One measurement of `params` on `variant`.
pub fn measure(variant: Variant, params: &FaninParams) -> Result<Measurement, WorkerError> {
    params.mix.require_messages_only()?;
    check_memory_bound(params)?;
    let run = match variant.scheduler() {
        Scheduler::OsThreads => threads::run(params, CHANNEL_CAPACITY)?,
        scheduler => {
            let receive = if variant.batched_receive() {
                tasks::Receive::Batched
            } else {
                tasks::Receive::OneByOne
            };
            tasks::run(scheduler, receive, params, CHANNEL_CAPACITY)?
        }
    };
    Ok(measurement(&run))
}

/// The channel bounds the receiver's backlog, and each sender holds at most one
/// signal while it waits for room: refuse, naming memory_limit_mb, a run whose
/// bounded worst case would not fit, rather than let it exhaust memory.
fn check_memory_bound(params: &FaninParams) -> Result<(), WorkerError> {
    let signal_bytes = params.mix.max_size() as u64 * 8 + SIGNAL_OVERHEAD_BYTES;
    let signals_in_flight = CHANNEL_CAPACITY as u64 + params.senders;
    let worst_case = signal_bytes.saturating_mul(signals_in_flight);
    let limit = params.memory_limit_mb * BYTES_PER_MB;
    if worst_case > limit {
        return Err(WorkerError::resource(format!(
            "memory_limit_mb = {} is too small: {} senders plus a channel of {} signals of up to {} bytes may hold {} MiB",
            params.memory_limit_mb,
            params.senders,
            CHANNEL_CAPACITY,
            signal_bytes,
            worst_case.div_ceil(BYTES_PER_MB)
        )));
    }
    Ok(())
}

/// The raw times; the harness derives both methods' throughput from them (the OTP
/// suite's planned duration and whole-ms drain included, spec/workloads/fanin.json).
fn measurement(run: &FaninRun) -> Measurement {
    // The receiver can see the last end marker just before the coordinator has
    // read the last report; there is then nothing left to drain.
    let drain = run.receive_time.saturating_sub(run.send_time);
    Measurement {
        measured: vec![
            ("send_ns", nanos(run.send_time)),
            ("receive_ns", nanos(run.receive_time)),
            ("drain_ns", nanos(drain)),
            ("cpu_ns", nanos(run.cpu)),
            ("peak_rss_bytes", peak_rss_bytes().into()),
        ],
        verify: vec![
            ("sent_message", run.sent_messages),
            ("received_message", run.received_messages),
            // Refused up front (require_messages_only): none are ever sent.
            ("sent_exit_signal", 0),
            ("received_exit_signal", 0),
            ("receiver_alive", u64::from(run.receiver_alive)),
        ],
        histograms: vec![],
    }
}

/// Seeds for the senders' generators: one random base per run (from the OS-seeded
/// keys std uses for hash maps), then one distinct seed per sender.
fn sender_seeds() -> impl Fn(u64) -> u64 + Copy {
    let base = RandomState::new().hash_one(0u8);
    move |index| base ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgbench_kit::protocol::ErrorKind;
    use serde_json::json;

    fn request(senders: u64, duration_ms: u64, size: u64, method: &str) -> Map<String, Value> {
        json!({
            "senders": senders,
            "duration_ms": duration_ms,
            "mix": [{"percent": 100, "kind": "message", "size": size}],
            "method": method,
            "memory_limit_mb": 8192
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn params(senders: u64, duration_ms: u64, size: u64, method: &str) -> FaninParams {
        FaninParams::from_json(&request(senders, duration_ms, size, method)).unwrap()
    }

    fn assert_counts_agree(result: &Measurement) {
        let sent = result.count("sent_message").unwrap();
        assert!(sent > 0);
        assert_eq!(result.count("received_message"), Some(sent));
        assert_eq!(result.count("sent_exit_signal"), Some(0));
        assert_eq!(result.count("received_exit_signal"), Some(0));
        assert_eq!(result.count("receiver_alive"), Some(1));
    }

    #[test]
    fn every_variant_delivers_every_message() {
        for variant in Variant::ALL {
            for (senders, size) in [(1, 1), (3, 10), (8, 100)] {
                let result = measure(variant, &params(senders, 20, size, "msgbench")).unwrap();
                assert_counts_agree(&result);
                let send_ns = result.fact("send_ns").unwrap().as_u64().unwrap();
                assert!(send_ns >= 20_000_000, "{variant:?}: send_ns {send_ns}");
                let receive_ns = result.fact("receive_ns").unwrap().as_u64().unwrap();
                // The last receive may come a hair before the coordinator has read
                // the last sender's report: receive_ns can be just below send_ns.
                assert!(
                    receive_ns >= 20_000_000,
                    "{variant:?}: receive_ns {receive_ns}"
                );
            }
        }
    }

    #[test]
    fn mixed_sizes_are_all_counted() {
        let mut request = request(2, 20, 1, "msgbench");
        request["mix"] = json!([
            {"percent": 50, "kind": "message", "size": 1},
            {"percent": 50, "kind": "message", "size": 1000}
        ]);
        let params = FaninParams::from_json(&request).unwrap();
        assert_counts_agree(&measure(Variant::DEFAULT, &params).unwrap());
    }

    #[test]
    fn exit_signals_are_unsupported() {
        let mut request = request(1, 10, 1, "msgbench");
        request["mix"] = json!([{"percent": 100, "kind": "exit_signal", "size": 1}]);
        let params = FaninParams::from_json(&request).unwrap();
        let error = measure(Variant::DEFAULT, &params).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
    }

    #[test]
    fn a_bound_beyond_the_memory_limit_is_a_resource_error() {
        let mut request = request(100_000, 10, 1_000_000, "msgbench");
        request["memory_limit_mb"] = json!(64);
        let params = FaninParams::from_json(&request).unwrap();
        let error = measure(Variant::DEFAULT, &params).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(
            error.message.contains("memory_limit_mb"),
            "{}",
            error.message
        );
    }

    #[test]
    fn seeds_differ_per_sender() {
        let seed = sender_seeds();
        assert_ne!(seed(0), seed(1));
    }
}
