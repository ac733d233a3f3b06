//! The chat workload (seed 003, the Chut benchmark): G groups of CPG users message
//! each other for T seconds.
//!
//! Every user, group and client is a tokio task with an unbounded mpsc inbox
//! (`tasks.rs`). A client sends through its user to a peer picked uniformly at
//! random among the other members of its group: client -> its user -> the group ->
//! the peer user (which keeps the message in its history) -> the peer's client,
//! which counts it and records its latency (`histogram.rs`). Stress (think_ms = 0):
//! send, then listen for listener_delay_ms (0: take what is already there), again.
//! Realistic: send every think_ms from a random phase, listen in between. At T the
//! clients stop sending and report; the coordinator waits until received == sent
//! or drain_timeout_s, then shuts every task down and collects their counts.

mod histogram;
mod tasks;

use crate::measure::{mem_available_bytes, millis};
use crate::params::ParamReader;
use crate::protocol::{Measurement, WorkerError};
use crate::variant::Variant;
pub use histogram::{LatencyHistogram, LatencyLog};
use serde_json::{Map, Value};
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

/// Accepted ranges, as in spec/workloads/chat.json (a unit test checks they agree).
pub const MIN_GROUPS: u64 = 1;
pub const MAX_GROUPS: u64 = 1_000_000;
pub const MIN_CLIENTS_PER_GROUP: u64 = 2;
pub const MAX_CLIENTS_PER_GROUP: u64 = 100_000;
pub const MAX_DURATION_S: f64 = 86_400.0;
pub const MAX_THINK_MS: u64 = 3_600_000;
pub const MAX_LISTENER_DELAY_MS: u64 = 1_000;
pub const MAX_HISTORY: u64 = 10_000;
pub const MAX_DRAIN_TIMEOUT_S: f64 = 3_600.0;

const PARAM_NAMES: [&str; 8] = [
    "groups",
    "clients_per_group",
    "duration_s",
    "think_ms",
    "listener_delay_ms",
    "message",
    "history",
    "drain_timeout_s",
];

/// The seed's text message (with its em dash, U+2014: 48 characters, 50 bytes).
pub const SENTENCE: &str = "I've been mad for fucking years\u{2014}absolutely years";

/// Memory one user costs in a realistic run (its task and inbox, its client's task
/// and inbox, the join set entries, history, latency log, a share of its group):
/// measured 9.1 KB at 100,000 users (README.md), rounded up. Only used to refuse,
/// up front, a run that cannot fit in the memory available.
const USER_BYTES_ESTIMATE: u64 = 10 * 1024;
/// A group's task and inbox, rounded up (a group of 2 weighs more per user).
const GROUP_BYTES_ESTIMATE: u64 = 2 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// The seed's sentence, one `&'static str` shared by every message.
    Text,
    /// The sentence plus the send timestamp, encoded into a fresh buffer per message.
    Binary,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatParams {
    pub groups: u64,
    pub clients_per_group: u64,
    /// T, the sending time.
    pub duration: Duration,
    /// Zero: stress.
    pub think: Duration,
    pub listener_delay: Duration,
    pub message: MessageKind,
    pub history: usize,
    pub drain_timeout: Duration,
}

impl ChatParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("chat", params, &PARAM_NAMES)?;
        let groups = reader.integer("groups", MIN_GROUPS, MAX_GROUPS)?;
        let clients_per_group = reader
            .integer(
                "clients_per_group",
                MIN_CLIENTS_PER_GROUP,
                MAX_CLIENTS_PER_GROUP,
            )
            .map_err(|error| {
                WorkerError::bad_params(format!(
                    "{} (a user needs a peer in its group to message, so at least 2 users per group)",
                    error.message
                ))
            })?;
        let duration_s = reader.number("duration_s", 0.0, true, MAX_DURATION_S)?;
        let think_ms = reader.integer("think_ms", 0, MAX_THINK_MS)?;
        let listener_delay_ms = reader.integer("listener_delay_ms", 0, MAX_LISTENER_DELAY_MS)?;
        let message = match reader.choice("message", &["text", "binary"])? {
            "binary" => MessageKind::Binary,
            _ => MessageKind::Text,
        };
        let history = reader.integer("history", 0, MAX_HISTORY)? as usize;
        let drain_timeout_s = reader.number("drain_timeout_s", 0.0, false, MAX_DRAIN_TIMEOUT_S)?;
        Ok(Self {
            groups,
            clients_per_group,
            duration: Duration::from_secs_f64(duration_s),
            think: Duration::from_millis(think_ms),
            listener_delay: Duration::from_millis(listener_delay_ms),
            message,
            history,
            drain_timeout: Duration::from_secs_f64(drain_timeout_s),
        })
    }

    pub fn users(&self) -> u64 {
        self.groups * self.clients_per_group
    }
}

/// What one run measured, with the counts its tasks counted.
#[derive(Debug, Clone)]
pub struct ChatRun {
    /// From the first spawn until every group, user and client has started.
    pub setup: Duration,
    /// From the release of the clients until T, or until the last client stopped
    /// sending if that was later (a stress client notices T on its next turn).
    pub send_window: Duration,
    /// From T until the last delivery (zero if none came after T).
    pub drain: Duration,
    /// Whether received == sent was reached before drain_timeout_s.
    pub drained: bool,
    /// Summed from the clients' own counts.
    pub sent: u64,
    pub received: u64,
    pub received_in_window: u64,
    pub cross_group: u64,
    pub self_deliveries: u64,
    /// Users that started (each counts itself).
    pub users: u64,
    /// Messages the users stored in their histories, and the longest history left.
    pub stored: u64,
    pub longest_history: usize,
    pub latency: LatencyHistogram,
    /// Tasks the run spawned, the coordinator included.
    pub tasks: u64,
    /// VmRSS once T had passed and every client had stopped sending.
    pub rss_at_end_of_t: u64,
    /// VmHWM after every task ended.
    pub peak_rss: u64,
}

/// Runs one measurement on the variant's tokio runtime.
pub fn run(variant: Variant, params: &ChatParams) -> Result<Measurement, WorkerError> {
    check_fits(params, mem_available_bytes())?;
    let run = tasks::run(variant.scheduler(), params, run_seed())?;
    if !run.drained {
        eprintln!(
            "msgbench-rust chat: drain_timeout_s passed with {} of {} messages received",
            run.received, run.sent
        );
    }
    Ok(measurement(params, &run))
}

/// Refuses, naming the params, a run whose users cannot fit in the memory
/// available (or be numbered), rather than let it exhaust memory.
fn check_fits(params: &ChatParams, available: Option<u64>) -> Result<(), WorkerError> {
    let users = params.users();
    if users > u64::from(u32::MAX) {
        return Err(WorkerError::resource(format!(
            "groups * clients_per_group = {users} users is more than this worker numbers ({})",
            u32::MAX
        )));
    }
    let need = users * USER_BYTES_ESTIMATE + params.groups * GROUP_BYTES_ESTIMATE;
    match available {
        Some(available) if need > available => Err(WorkerError::resource(format!(
            "groups * clients_per_group = {users} users need about {} MiB, more than the {} MiB available (MemAvailable)",
            need.div_ceil(1 << 20),
            available >> 20
        ))),
        _ => Ok(()),
    }
}

fn measurement(params: &ChatParams, run: &ChatRun) -> Measurement {
    let seconds = run.send_window.as_secs_f64();
    let groups = params.groups as f64;
    // Per client: the users that started (equal to G * CPG, which verify checks).
    let users = run.users.max(1) as f64;
    let sent = run.sent as f64;
    // The received averages count what arrived within T, as the seed's
    // Received did, so a flood delivered only in the drain does not score as
    // received per second of T; received_count (the drain included) is what
    // verify compares with sent.
    let in_window = run.received_in_window as f64;
    let micros = |nanos: f64| nanos / 1000.0;
    Measurement {
        metrics: vec![
            ("sent_count", sent),
            ("received_count", run.received as f64),
            ("received_in_window_count", in_window),
            ("sent_per_s", sent / seconds),
            ("received_per_s", in_window / seconds),
            ("sent_per_group_count", sent / groups),
            ("received_per_group_count", in_window / groups),
            ("sent_per_client_count", sent / users),
            ("received_per_client_count", in_window / users),
            ("sent_per_client_per_s", sent / users / seconds),
            ("received_per_client_per_s", in_window / users / seconds),
            ("latency_p50_us", micros(run.latency.quantile_nanos(0.50))),
            ("latency_p99_us", micros(run.latency.quantile_nanos(0.99))),
            ("latency_max_us", micros(run.latency.max_nanos() as f64)),
            ("setup_ms", millis(run.setup)),
            ("send_window_ms", millis(run.send_window)),
            ("drain_ms", millis(run.drain)),
            ("processes_count", run.tasks as f64),
            ("peak_rss_bytes", run.peak_rss as f64),
            ("runtime_memory_bytes", run.rss_at_end_of_t as f64),
            ("memory_per_user_bytes", run.peak_rss as f64 / users),
        ],
        verify: vec![
            ("sent", run.sent),
            ("received", run.received),
            ("cross_group", run.cross_group),
            ("self_deliveries", run.self_deliveries),
            ("users", run.users),
        ],
    }
}

/// One random value per run (from the OS-seeded keys std uses for hash maps); each
/// client derives its own generator's seed from it and its user id.
fn run_seed() -> u64 {
    RandomState::new().hash_one(0u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;
    use serde_json::json;

    fn request(groups: u64, cpg: u64, duration_s: f64, think_ms: u64) -> Map<String, Value> {
        json!({
            "groups": groups,
            "clients_per_group": cpg,
            "duration_s": duration_s,
            "think_ms": think_ms,
            "listener_delay_ms": 0,
            "message": "text",
            "history": 10,
            "drain_timeout_s": 10
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn params(groups: u64, cpg: u64, duration_s: f64, think_ms: u64) -> ChatParams {
        ChatParams::from_json(&request(groups, cpg, duration_s, think_ms)).unwrap()
    }

    fn chat(variant: Variant, params: &ChatParams) -> ChatRun {
        tasks::run(variant.scheduler(), params, run_seed()).unwrap()
    }

    /// The spec's verify rules, and what the run itself checked.
    fn assert_verifies(run: &ChatRun, params: &ChatParams) {
        assert!(run.sent > 0, "nothing sent");
        assert!(run.drained, "not drained: {} of {}", run.received, run.sent);
        assert_eq!(run.received, run.sent);
        assert_eq!(run.cross_group, 0);
        assert_eq!(run.self_deliveries, 0);
        assert_eq!(run.users, params.users());
        assert_eq!(run.latency.count(), run.received);
        assert!(run.received_in_window <= run.received);
        // Every delivery passed through the peer user, which stored it.
        assert_eq!(
            run.stored,
            if params.history > 0 { run.received } else { 0 }
        );
        assert!(run.longest_history <= params.history);
        assert_eq!(
            run.tasks,
            1 + params.groups * (2 * params.clients_per_group + 1)
        );
    }

    /// The seed's Received stopped counting at T, so the received averages are
    /// taken from what arrived before T; the drain shows only in received_count.
    #[test]
    fn received_averages_count_what_arrived_before_t() {
        let run = ChatRun {
            setup: Duration::ZERO,
            send_window: Duration::from_secs(2),
            drain: Duration::from_secs(1),
            drained: true,
            sent: 1000,
            received: 1000,
            received_in_window: 250,
            cross_group: 0,
            self_deliveries: 0,
            users: 10,
            stored: 1000,
            longest_history: 10,
            latency: LatencyHistogram::new(),
            tasks: 1 + 2 * (2 * 5 + 1),
            rss_at_end_of_t: 0,
            peak_rss: 0,
        };
        let m = measurement(&params(2, 5, 2.0, 0), &run);
        for (name, want) in [
            ("sent_per_s", 500.0),
            ("received_count", 1000.0),
            ("received_in_window_count", 250.0),
            ("received_per_s", 125.0),
            ("received_per_group_count", 125.0),
            ("received_per_client_count", 25.0),
            ("received_per_client_per_s", 12.5),
        ] {
            assert_eq!(m.metric(name), Some(want), "{name}");
        }
    }

    #[test]
    fn stress_delivers_every_message_within_its_group() {
        for variant in [Variant::Default, Variant::CurrentThread] {
            for (groups, cpg) in [(1, 2), (3, 4), (20, 10)] {
                let params = params(groups, cpg, 0.2, 0);
                let run = chat(variant, &params);
                assert_verifies(&run, &params);
                assert!(run.send_window >= params.duration);
                // Stress users fill their histories, which stay bounded.
                assert_eq!(run.longest_history, params.history, "{variant:?}");
            }
        }
    }

    #[test]
    fn stress_with_a_listener_delay_and_binary_messages() {
        let mut request = request(4, 5, 0.2, 0);
        request["listener_delay_ms"] = json!(1);
        request["message"] = json!("binary");
        request["history"] = json!(3);
        let params = ChatParams::from_json(&request).unwrap();
        assert_eq!(params.message, MessageKind::Binary);
        let run = chat(Variant::Default, &params);
        assert_verifies(&run, &params);
        assert_eq!(run.longest_history, 3);
        // Each client waits >= 1 ms after each send: at most 200 sends in 0.2 s.
        assert!(run.sent <= 20 * 201, "{}", run.sent);
    }

    #[test]
    fn history_zero_keeps_nothing() {
        let mut request = request(2, 3, 0.1, 0);
        request["history"] = json!(0);
        let params = ChatParams::from_json(&request).unwrap();
        let run = chat(Variant::CurrentThread, &params);
        assert_verifies(&run, &params);
        assert_eq!(run.longest_history, 0);
        assert_eq!(run.stored, 0);
    }

    #[test]
    fn realistic_clients_send_once_per_think_period() {
        // T = 0.3 s, think = 50 ms: at most six sends per client (the last one
        // possibly falling just past T on the 1 ms timer), never more: a client
        // waits its think time. How many fewer depends on how late a loaded
        // machine fires the timers (70 of 120 seen under a load of 15), so the
        // lower bound asks for a third of the periods.
        let params = params(5, 4, 0.3, 50);
        for variant in [Variant::Default, Variant::CurrentThread] {
            let run = chat(variant, &params);
            assert_verifies(&run, &params);
            let users = params.users();
            assert!(
                run.sent >= 2 * users && run.sent <= 6 * users,
                "{variant:?}: {} sends by {users} users",
                run.sent
            );
            // Nothing stays in flight for long (generous bounds: the machine is shared).
            assert!(run.drain < Duration::from_secs(1), "{:?}", run.drain);
            assert!(run.latency.quantile_nanos(0.99) < 1e9);
            assert!(run.send_window >= params.duration);
        }
    }

    #[test]
    fn a_zero_drain_timeout_still_reports() {
        let mut request = request(2, 2, 0.05, 0);
        request["drain_timeout_s"] = json!(0);
        let params = ChatParams::from_json(&request).unwrap();
        let run = chat(Variant::Default, &params);
        assert!(run.sent > 0);
        assert!(run.received <= run.sent);
        assert_eq!(run.users, 4);
    }

    #[test]
    fn reports_every_spec_metric_with_the_seed_averages() {
        let params = params(2, 3, 0.1, 0);
        let result = run(Variant::Default, &params).unwrap();
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/chat.json")).unwrap();
        for metric in spec["metrics"].as_object().unwrap().keys() {
            let value = result.metric(metric).unwrap_or_else(|| panic!("{metric}"));
            assert!(value.is_finite() && value >= 0.0, "{metric} = {value}");
        }
        let sent = result.count("sent").unwrap() as f64;
        let seconds = result.metric("send_window_ms").unwrap() / 1000.0;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(result.metric("sent_per_s").unwrap(), sent / seconds));
        assert!(close(
            result.metric("sent_per_group_count").unwrap(),
            sent / 2.0
        ));
        assert!(close(
            result.metric("sent_per_client_count").unwrap(),
            sent / 6.0
        ));
        assert!(close(
            result.metric("sent_per_client_per_s").unwrap(),
            sent / 6.0 / seconds
        ));
        let peak = result.metric("peak_rss_bytes").unwrap();
        assert!(close(
            result.metric("memory_per_user_bytes").unwrap(),
            peak / 6.0
        ));
        assert_eq!(result.count("users"), Some(6));
        assert_eq!(result.metric("processes_count"), Some(15.0));
    }

    #[test]
    fn validates_params() {
        let cases = [
            ("groups", json!(0)),
            ("groups", json!(1_000_001)),
            ("clients_per_group", json!(100_001)),
            ("duration_s", json!(0)),
            ("duration_s", json!(-1)),
            ("duration_s", json!(86_400.5)),
            ("duration_s", json!("10")),
            ("think_ms", json!(-1)),
            ("think_ms", json!(3_600_001)),
            ("think_ms", json!(1.5)),
            ("listener_delay_ms", json!(1001)),
            ("message", json!("json")),
            ("history", json!(10_001)),
            ("drain_timeout_s", json!(-0.1)),
            ("drain_timeout_s", json!(3600.5)),
        ];
        for (name, value) in cases {
            let mut request = request(1, 2, 1.0, 0);
            request[name] = value.clone();
            let error = ChatParams::from_json(&request).unwrap_err();
            assert_eq!(error.kind, ErrorKind::BadParams, "{name} = {value}");
            assert!(
                error.message.starts_with(&format!("{name} = ")),
                "{}",
                error.message
            );
        }
        let mut request = request(1, 2, 1.0, 0);
        request["clients_per_group"] = json!(1);
        let error = ChatParams::from_json(&request).unwrap_err();
        assert!(
            error
                .message
                .starts_with("clients_per_group = 1 is out of range")
                && error.message.contains("needs a peer"),
            "{}",
            error.message
        );
        let request = super::tests::request(1, 2, 1.0, 0);
        let mut unknown = request.clone();
        unknown.insert("rooms".to_string(), json!(3));
        assert!(
            ChatParams::from_json(&unknown)
                .unwrap_err()
                .message
                .contains("rooms")
        );
        let mut missing = request.clone();
        missing.remove("history");
        assert!(
            ChatParams::from_json(&missing)
                .unwrap_err()
                .message
                .contains("history")
        );
        // The edges of every range are accepted.
        let mut edges = request.clone();
        edges["duration_s"] = json!(0.001);
        edges["drain_timeout_s"] = json!(0);
        edges["history"] = json!(0);
        edges["think_ms"] = json!(3_600_000);
        edges["listener_delay_ms"] = json!(1000);
        assert!(ChatParams::from_json(&edges).is_ok());
    }

    #[test]
    fn a_run_beyond_the_memory_is_a_resource_error() {
        let huge = ChatParams {
            groups: 1_000_000,
            clients_per_group: 100_000,
            ..params(1, 2, 1.0, 0)
        };
        assert_eq!(
            check_fits(&huge, None).unwrap_err().kind,
            ErrorKind::Resource
        );
        let big = ChatParams {
            groups: 100_000,
            clients_per_group: 100,
            ..huge
        };
        let error = check_fits(&big, Some(1 << 30)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(
            error.message.contains("clients_per_group"),
            "{}",
            error.message
        );
        assert!(check_fits(&params(10_000, 10, 1.0, 5000), Some(4 << 30)).is_ok());
    }

    #[test]
    fn the_sentence_is_the_seeds() {
        assert_eq!(SENTENCE.chars().count(), 48);
        assert_eq!(SENTENCE.len(), 50);
        assert!(SENTENCE.contains('\u{2014}'));
    }

    #[test]
    fn ranges_agree_with_the_spec() {
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/chat.json")).unwrap();
        let p = &spec["params"];
        assert_eq!(p["groups"]["minimum"], MIN_GROUPS);
        assert_eq!(p["groups"]["maximum"], MAX_GROUPS);
        assert_eq!(p["clients_per_group"]["minimum"], MIN_CLIENTS_PER_GROUP);
        assert_eq!(p["clients_per_group"]["maximum"], MAX_CLIENTS_PER_GROUP);
        assert_eq!(p["duration_s"]["exclusiveMinimum"], 0);
        assert_eq!(p["duration_s"]["maximum"].as_f64(), Some(MAX_DURATION_S));
        assert_eq!(p["think_ms"]["minimum"], 0);
        assert_eq!(p["think_ms"]["maximum"], MAX_THINK_MS);
        assert_eq!(p["listener_delay_ms"]["minimum"], 0);
        assert_eq!(p["listener_delay_ms"]["maximum"], MAX_LISTENER_DELAY_MS);
        assert_eq!(p["message"]["enum"], json!(["text", "binary"]));
        assert_eq!(p["history"]["minimum"], 0);
        assert_eq!(p["history"]["maximum"], MAX_HISTORY);
        assert_eq!(p["drain_timeout_s"]["minimum"], 0);
        assert_eq!(
            p["drain_timeout_s"]["maximum"].as_f64(),
            Some(MAX_DRAIN_TIMEOUT_S)
        );
        let names: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(names.len(), PARAM_NAMES.len());
        assert!(names.iter().all(|name| PARAM_NAMES.contains(name)));
        let verify: Vec<&str> = spec["verify"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rule| rule["rule"].as_str().unwrap())
            .collect();
        for name in [
            "received",
            "sent",
            "cross_group",
            "self_deliveries",
            "users",
        ] {
            assert!(verify.iter().any(|rule| rule.contains(name)), "{name}");
        }
    }
}
