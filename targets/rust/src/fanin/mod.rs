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

use crate::measure::{millis, peak_rss_bytes, per_second};
use crate::params::ParamReader;
use crate::protocol::{Measurement, WorkerError};
use crate::variant::{Scheduler, Variant};
use mix::Mix;
use serde_json::{Map, Value};
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

/// Accepted ranges, as in spec/workloads/fanin.json (a unit test checks they agree).
pub const MIN_SENDERS: u64 = 1;
pub const MAX_SENDERS: u64 = 100_000;
pub const MIN_DURATION_MS: u64 = 1;
pub const MAX_DURATION_MS: u64 = 3_600_000;
pub const MIN_MEMORY_LIMIT_MB: u64 = 64;
pub const MAX_MEMORY_LIMIT_MB: u64 = 1_048_576;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Measured times, send and receive from one run.
    Msgbench,
    /// The OTP suite's arithmetic: planned duration, drain in whole milliseconds.
    Otp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FaninParams {
    pub senders: u64,
    pub duration: Duration,
    pub mix: Mix,
    pub method: Method,
    pub memory_limit_mb: u64,
}

impl FaninParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("fanin", params, &PARAM_NAMES)?;
        let senders = reader.integer("senders", MIN_SENDERS, MAX_SENDERS)?;
        let duration_ms = reader.integer("duration_ms", MIN_DURATION_MS, MAX_DURATION_MS)?;
        let mix = Mix::from_json(reader.value("mix")?)?;
        let method = match reader.choice("method", &["msgbench", "otp"])? {
            "otp" => Method::Otp,
            _ => Method::Msgbench,
        };
        let memory_limit_mb =
            reader.integer("memory_limit_mb", MIN_MEMORY_LIMIT_MB, MAX_MEMORY_LIMIT_MB)?;
        Ok(Self {
            senders,
            duration: Duration::from_millis(duration_ms),
            mix,
            method,
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
pub fn run(variant: Variant, params: &FaninParams) -> Result<Measurement, WorkerError> {
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
    Ok(measurement(params, &run))
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

fn measurement(params: &FaninParams, run: &FaninRun) -> Measurement {
    let sent = run.sent_messages;
    // The receiver can see the last end marker just before the coordinator has
    // read the last report; there is then nothing left to drain.
    let drain = run.receive_time.saturating_sub(run.send_time);
    let (send_time, receive_time) = match params.method {
        Method::Msgbench => (run.send_time, run.receive_time),
        Method::Otp => {
            let whole_drain_ms = Duration::from_millis(drain.as_millis() as u64);
            (params.duration, params.duration + whole_drain_ms)
        }
    };
    Measurement {
        metrics: vec![
            ("send_throughput_per_s", per_second(sent, send_time)),
            ("receive_throughput_per_s", per_second(sent, receive_time)),
            ("send_duration_ms", millis(send_time)),
            ("receive_duration_ms", millis(receive_time)),
            ("drain_ms", millis(drain)),
            ("cpu_ms", millis(run.cpu)),
            ("peak_rss_bytes", peak_rss_bytes() as f64),
        ],
        verify: vec![
            ("sent_message", run.sent_messages),
            ("received_message", run.received_messages),
            // Refused up front (require_messages_only): none are ever sent.
            ("sent_exit_signal", 0),
            ("received_exit_signal", 0),
            ("receiver_alive", u64::from(run.receiver_alive)),
        ],
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
    use crate::protocol::ErrorKind;
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
                let result = run(variant, &params(senders, 20, size, "msgbench")).unwrap();
                assert_counts_agree(&result);
                let send_ms = result.metric("send_duration_ms").unwrap();
                assert!(send_ms >= 20.0, "{variant:?}: send_duration_ms {send_ms}");
                assert!(result.metric("receive_throughput_per_s").unwrap() > 0.0);
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
        assert_counts_agree(&run(Variant::Default, &params).unwrap());
    }

    #[test]
    fn otp_method_uses_planned_duration_and_whole_drain() {
        let result = run(Variant::CurrentThread, &params(2, 30, 1, "otp")).unwrap();
        assert_counts_agree(&result);
        assert_eq!(result.metric("send_duration_ms"), Some(30.0));
        let receive_ms = result.metric("receive_duration_ms").unwrap();
        assert_eq!(receive_ms.fract(), 0.0);
        assert!(receive_ms >= 30.0);
        let sent = result.count("sent_message").unwrap() as f64;
        let send_rate = result.metric("send_throughput_per_s").unwrap();
        assert!((send_rate - sent / 0.030).abs() < 1e-6 * send_rate);
    }

    #[test]
    fn metrics_follow_the_method_formulas() {
        let run = FaninRun {
            send_time: Duration::from_millis(1000),
            receive_time: Duration::from_micros(1_250_700),
            cpu: Duration::from_millis(2000),
            sent_messages: 1000,
            received_messages: 1000,
            receiver_alive: true,
        };
        let msgbench = measurement(&params(1, 1000, 1, "msgbench"), &run);
        assert_eq!(msgbench.metric("send_throughput_per_s"), Some(1000.0));
        assert_eq!(
            msgbench.metric("receive_throughput_per_s"),
            Some(1000.0 / 1.2507)
        );
        assert_eq!(msgbench.metric("drain_ms"), Some(250.7));
        let otp = measurement(&params(1, 1000, 1, "otp"), &run);
        assert_eq!(otp.metric("receive_duration_ms"), Some(1250.0));
        assert_eq!(otp.metric("receive_throughput_per_s"), Some(800.0));
    }

    #[test]
    fn exit_signals_are_unsupported() {
        let mut request = request(1, 10, 1, "msgbench");
        request["mix"] = json!([{"percent": 100, "kind": "exit_signal", "size": 1}]);
        let params = FaninParams::from_json(&request).unwrap();
        let error = run(Variant::Default, &params).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
    }

    #[test]
    fn a_bound_beyond_the_memory_limit_is_a_resource_error() {
        let mut request = request(100_000, 10, 1_000_000, "msgbench");
        request["memory_limit_mb"] = json!(64);
        let params = FaninParams::from_json(&request).unwrap();
        let error = run(Variant::Default, &params).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(
            error.message.contains("memory_limit_mb"),
            "{}",
            error.message
        );
    }

    #[test]
    fn validates_params() {
        let cases = [
            ("senders", json!(0)),
            ("senders", json!(100_001)),
            ("duration_ms", json!(0)),
            ("method", json!("fast")),
            ("memory_limit_mb", json!(63)),
            ("mix", json!([])),
        ];
        for (name, value) in cases {
            let mut request = request(1, 10, 1, "msgbench");
            request[name] = value;
            let error = FaninParams::from_json(&request).unwrap_err();
            assert_eq!(error.kind, ErrorKind::BadParams);
            assert!(error.message.contains(name), "{}", error.message);
        }
        let mut request = request(1, 10, 1, "msgbench");
        request.insert("queue".to_string(), json!("off_heap"));
        assert!(FaninParams::from_json(&request).is_err());
    }

    #[test]
    fn seeds_differ_per_sender() {
        let seed = sender_seeds();
        assert_ne!(seed(0), seed(1));
    }

    #[test]
    fn ranges_agree_with_the_spec() {
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/fanin.json")).unwrap();
        let p = &spec["params"];
        assert_eq!(p["senders"]["minimum"], MIN_SENDERS);
        assert_eq!(p["senders"]["maximum"], MAX_SENDERS);
        assert_eq!(p["duration_ms"]["minimum"], MIN_DURATION_MS);
        assert_eq!(p["duration_ms"]["maximum"], MAX_DURATION_MS);
        assert_eq!(p["memory_limit_mb"]["minimum"], MIN_MEMORY_LIMIT_MB);
        assert_eq!(p["memory_limit_mb"]["maximum"], MAX_MEMORY_LIMIT_MB);
        assert_eq!(p["method"]["enum"], json!(["msgbench", "otp"]));
        let names: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(names.len(), PARAM_NAMES.len());
        assert!(names.iter().all(|name| PARAM_NAMES.contains(name)));
    }
}
