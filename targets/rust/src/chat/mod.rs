//! The chat workload (seed 003, the Chut benchmark): G groups of CPG users message
//! each other for T seconds.
//!
//! Every user, group and client is a tokio task with an unbounded mpsc inbox
//! (`tasks.rs`). A client sends through its user to a peer picked uniformly at
//! random among the other members of its group: client -> its user -> the group ->
//! the peer user (which keeps the message in its history) -> the peer's client,
//! which counts it and records its latency (the kit's `histogram`). Stress (think_ms = 0):
//! send, then listen for listener_delay_ms (0: take what is already there), again.
//! Realistic: send every think_ms from a random phase, listen in between. At T the
//! clients stop sending and report; the coordinator waits until received == sent
//! or drain_timeout_s, then shuts every task down and collects their counts.

mod tasks;

use crate::variant::{Variant, Workload};
pub use msgbench_kit::histogram::{LatencyHistogram, LatencyLog};
use msgbench_kit::measure::{mem_available_bytes, nanos};
use msgbench_kit::params::ParamReader;
use msgbench_kit::protocol::{Measurement, Request, WorkerError};
use serde_json::{Map, Value};
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

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
        let groups = reader.integer("groups")?;
        let clients_per_group = reader.integer("clients_per_group")?;
        let duration_s = reader.number("duration_s")?;
        let think_ms = reader.integer("think_ms")?;
        let listener_delay_ms = reader.integer("listener_delay_ms")?;
        let message = match reader.choice("message", &["text", "binary"])? {
            "binary" => MessageKind::Binary,
            _ => MessageKind::Text,
        };
        let history = reader.integer("history")? as usize;
        let drain_timeout_s = reader.number("drain_timeout_s")?;
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
pub fn run(request: &Request) -> Result<Measurement, WorkerError> {
    measure(
        Variant::from_options(Workload::Chat, &request.options)?,
        &ChatParams::from_json(&request.params)?,
    )
}

/// One measurement of `params` on `variant`.
pub fn measure(variant: Variant, params: &ChatParams) -> Result<Measurement, WorkerError> {
    check_fits(params, mem_available_bytes())?;
    let run = tasks::run(variant.scheduler(), params, run_seed())?;
    if !run.drained {
        eprintln!(
            "msgbench-rust chat: drain_timeout_s passed with {} of {} messages received",
            run.received, run.sent
        );
    }
    Ok(measurement(&run))
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

/// The raw facts and the latency histogram; the harness derives the seed's averages
/// (per second of the measured send window, per group, per client) and the
/// percentiles. received_in_window counts what arrived within T, as the seed's
/// Received did; received (the drain included) is what verify compares with sent.
fn measurement(run: &ChatRun) -> Measurement {
    Measurement {
        measured: vec![
            ("setup_ns", nanos(run.setup)),
            ("send_window_ns", nanos(run.send_window)),
            ("drain_ns", nanos(run.drain)),
            ("received_in_window", run.received_in_window.into()),
            ("processes_count", run.tasks.into()),
            ("peak_rss_bytes", run.peak_rss.into()),
            ("runtime_memory_bytes", run.rss_at_end_of_t.into()),
            ("latency_max_ns", run.latency.max_nanos().into()),
        ],
        verify: vec![
            ("sent", run.sent),
            ("received", run.received),
            ("cross_group", run.cross_group),
            ("self_deliveries", run.self_deliveries),
            ("users", run.users),
        ],
        histograms: vec![("latency_ns", run.latency.sparse())],
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
    use msgbench_kit::protocol::ErrorKind;
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
    fn stress_delivers_every_message_within_its_group() {
        for variant in [Variant::DEFAULT, Variant::CURRENT_THREAD] {
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
        let run = chat(Variant::DEFAULT, &params);
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
        let run = chat(Variant::CURRENT_THREAD, &params);
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
        for variant in [Variant::DEFAULT, Variant::CURRENT_THREAD] {
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
            assert!(run.latency.max_nanos() < 10_000_000_000);
            assert!(run.send_window >= params.duration);
        }
    }

    #[test]
    fn a_zero_drain_timeout_still_reports() {
        let mut request = request(2, 2, 0.05, 0);
        request["drain_timeout_s"] = json!(0);
        let params = ChatParams::from_json(&request).unwrap();
        let run = chat(Variant::DEFAULT, &params);
        assert!(run.sent > 0);
        assert!(run.received <= run.sent);
        assert_eq!(run.users, 4);
    }

    #[test]
    fn reports_the_spec_raw_facts_and_the_latency_histogram() {
        let params = params(2, 3, 0.1, 0);
        let result = measure(Variant::DEFAULT, &params).unwrap();
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/chat.json")).unwrap();
        // Facts optional by a rule on the parameters (the server kind's) are the
        // harness's to require; every other fact the in-process kind reports.
        for (fact, about) in spec["measured"].as_object().unwrap() {
            if about["optional"].is_null() {
                assert!(result.fact(fact).is_some(), "{fact}");
            }
        }
        assert_eq!(result.count("users"), Some(6));
        assert_eq!(result.fact("processes_count"), Some(&json!(15)));
        let (name, pairs) = &result.histograms[0];
        assert_eq!(*name, "latency_ns");
        let counted: u64 = pairs.iter().map(|(_, count)| count).sum();
        assert_eq!(Some(counted), result.count("received"));
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
}
