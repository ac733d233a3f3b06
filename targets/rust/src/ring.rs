//! The ring workload (seed 004): N tokio tasks in a ring, a token passed M laps.
//!
//! Phase 1 builds the ring as the seed does: the root spawns link N-1, each link
//! spawns the next, the last link sends `Connect` (carrying its own Sender) to its
//! predecessor, and each link, on hearing from its successor, sends its own
//! `Connect` back, until one reaches the root. Phase 2: the root sends the token
//! with the lap count, every link forwards whatever it gets, and the root (the lap
//! counter) sends the token on with one lap less until the last lap is back.
//! Afterwards a `Collect` message travels the ring once, adding up the hops each
//! link counted, and each link exits once it has passed it on.

use crate::measure::{Elapsed, Stopwatch, millis, peak_rss_bytes, per_second};
use crate::params::ParamReader;
use crate::protocol::{Measurement, WorkerError};
use crate::variant::{Variant, tokio_runtime};
use serde_json::{Map, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Accepted ranges, as in spec/workloads/ring.json (a unit test checks they agree).
pub const MIN_N: u64 = 2;
pub const MAX_N: u64 = 134_217_727;
pub const MIN_M: u64 = 1;
pub const MAX_M: u64 = 1_000_000_000;
pub const MAX_PAYLOAD_CHARS: usize = 65_536;

const PARAM_NAMES: [&str; 3] = ["n", "m", "payload"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingParams {
    /// Processes in the ring, the root included.
    pub n: u64,
    /// Laps of the token.
    pub m: u64,
    /// What travels with the lap count (the seed's "BOO!").
    pub payload: String,
}

impl RingParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("ring", params, &PARAM_NAMES)?;
        Ok(Self {
            n: reader.integer("n", MIN_N, MAX_N)?,
            m: reader.integer("m", MIN_M, MAX_M)?,
            payload: reader.string("payload", 0, MAX_PAYLOAD_CHARS)?,
        })
    }
}

/// What a link task may receive.
#[derive(Debug)]
enum RingMessage {
    /// Phase 1, to the predecessor: "send to me from now on". `links` counts the
    /// links from the sender to the end of the chain, the sender included.
    Connect { successor: LinkSender, links: u64 },
    /// Phase 2: the seed's `{Laps, Payload}`. The payload String is moved from task
    /// to task, as ownership passes in Rust; nothing is shared between tasks.
    Token { laps: u64, payload: String },
    /// After timing: the hops counted so far; each link adds its own and exits.
    Collect { hops: u64 },
}

type LinkSender = UnboundedSender<RingMessage>;
type LinkInbox = UnboundedReceiver<RingMessage>;

/// What the root learned, counted by the tasks themselves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RingReport {
    pub create: Elapsed,
    pub pass: Elapsed,
    /// Tasks that joined the ring (counted by the Connect messages, plus the root).
    pub links: u64,
    /// Laps the root saw come back.
    pub laps: u64,
    /// Token sends by the root plus forwards by every link.
    pub hops: u64,
}

/// Runs one measurement on the variant's tokio runtime.
pub fn run(variant: Variant, params: &RingParams) -> Result<Measurement, WorkerError> {
    let runtime = tokio_runtime(variant.scheduler(), false)?;
    let root_params = params.clone();
    // The root is a task like the links (not the thread blocked in block_on), so on
    // the multi-thread runtime it is scheduled by the same workers.
    let outcome = runtime.block_on(async move { tokio::spawn(root(root_params)).await });
    drop(runtime);
    let report =
        outcome.map_err(|err| WorkerError::internal(format!("the ring root failed: {err}")))??;
    Ok(measurement(params, &report))
}

fn measurement(params: &RingParams, report: &RingReport) -> Measurement {
    Measurement {
        metrics: vec![
            ("create_wall_ms", millis(report.create.wall)),
            ("create_cpu_ms", millis(report.create.cpu)),
            ("pass_wall_ms", millis(report.pass.wall)),
            ("pass_cpu_ms", millis(report.pass.cpu)),
            (
                "hops_per_s",
                per_second(params.n * params.m, report.pass.wall),
            ),
            ("spawns_per_s", per_second(params.n, report.create.wall)),
            ("peak_rss_bytes", peak_rss_bytes() as f64),
        ],
        verify: vec![
            ("hops", report.hops),
            ("laps", report.laps),
            ("links", report.links),
        ],
    }
}

fn ring_broke(phase: &str) -> WorkerError {
    WorkerError::internal(format!(
        "the ring broke during {phase}: a link task ended early"
    ))
}

/// The seed's `start/2` and `lapCounter/1`.
async fn root(params: RingParams) -> Result<RingReport, WorkerError> {
    let (me, mut inbox) = unbounded_channel();

    let creation = Stopwatch::start();
    // As the seed's spawn(newLink, [N-1, self(), self()]): the root is both the
    // predecessor of the first link and the successor of the last one.
    spawn_link(params.n - 1, me.clone(), me);
    let (successor, links_behind) = match inbox.recv().await {
        Some(RingMessage::Connect { successor, links }) => (successor, links),
        _ => return Err(ring_broke("creation")),
    };
    let create = creation.stop();

    let passing = Stopwatch::start();
    let mut hops: u64 = 1;
    let mut laps: u64 = 0;
    successor
        .send(RingMessage::Token {
            laps: params.m,
            payload: params.payload,
        })
        .map_err(|_| ring_broke("passing"))?;
    loop {
        match inbox.recv().await {
            Some(RingMessage::Token { laps: 1, .. }) => {
                laps += 1;
                break;
            }
            Some(RingMessage::Token {
                laps: left,
                payload,
            }) => {
                laps += 1;
                hops += 1;
                successor
                    .send(RingMessage::Token {
                        laps: left - 1,
                        payload,
                    })
                    .map_err(|_| ring_broke("passing"))?;
            }
            _ => return Err(ring_broke("passing")),
        }
    }
    let pass = passing.stop();

    successor
        .send(RingMessage::Collect { hops })
        .map_err(|_| ring_broke("collection"))?;
    let total_hops = match inbox.recv().await {
        Some(RingMessage::Collect { hops }) => hops,
        _ => return Err(ring_broke("collection")),
    };
    Ok(RingReport {
        create,
        pass,
        links: links_behind + 1,
        laps,
        hops: total_hops,
    })
}

/// A separate item so that `link`'s future type does not depend on itself (the
/// compiler could not then prove it `Send` for tokio::spawn).
fn spawn_link(remaining: u64, predecessor: LinkSender, root: LinkSender) {
    tokio::spawn(link(remaining, predecessor, root));
}

/// The seed's `newLink/3`: `remaining` counts this link and those it will spawn.
/// A link that cannot send returns, dropping its Senders, so a broken ring ends
/// with the root's inbox closing instead of hanging.
async fn link(remaining: u64, predecessor: LinkSender, root: LinkSender) {
    let (me, mut inbox) = unbounded_channel();
    let (successor, links) = if remaining == 1 {
        // The last link closes the ring onto the root.
        (root, 1)
    } else {
        spawn_link(remaining - 1, me.clone(), root);
        match inbox.recv().await {
            Some(RingMessage::Connect { successor, links }) => (successor, links + 1),
            _ => return,
        }
    };
    if predecessor
        .send(RingMessage::Connect {
            successor: me,
            links,
        })
        .is_err()
    {
        return;
    }
    drop(predecessor);
    pass_messages_on(inbox, successor).await;
}

/// The seed's `passMsgOn/1`: forward whatever arrives, counting the hops.
async fn pass_messages_on(mut inbox: LinkInbox, successor: LinkSender) {
    let mut hops: u64 = 0;
    while let Some(message) = inbox.recv().await {
        let message = match message {
            RingMessage::Collect { hops: before } => {
                let _ = successor.send(RingMessage::Collect {
                    hops: before + hops,
                });
                return;
            }
            other => other,
        };
        hops += 1;
        if successor.send(message).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;
    use serde_json::json;

    fn params(value: Value) -> Result<RingParams, WorkerError> {
        RingParams::from_json(value.as_object().unwrap())
    }

    fn ring(n: u64, m: u64) -> RingParams {
        RingParams {
            n,
            m,
            payload: "BOO!".to_string(),
        }
    }

    #[test]
    fn small_rings_count_every_hop_lap_and_link() {
        for variant in [Variant::Default, Variant::CurrentThread] {
            for (n, m) in [(2, 1), (2, 5), (3, 3), (10, 1), (1000, 7)] {
                let result = run(variant, &ring(n, m)).unwrap();
                assert_eq!(result.count("hops"), Some(n * m), "{variant:?} n={n} m={m}");
                assert_eq!(result.count("laps"), Some(m));
                assert_eq!(result.count("links"), Some(n));
                assert!(result.metric("hops_per_s").unwrap() > 0.0);
                assert!(result.metric("peak_rss_bytes").unwrap() > 0.0);
            }
        }
    }

    #[test]
    fn reports_every_spec_metric() {
        let result = run(Variant::CurrentThread, &ring(5, 2)).unwrap();
        for name in [
            "create_wall_ms",
            "create_cpu_ms",
            "pass_wall_ms",
            "pass_cpu_ms",
            "hops_per_s",
            "spawns_per_s",
            "peak_rss_bytes",
        ] {
            assert!(result.metric(name).is_some(), "missing {name}");
        }
    }

    #[test]
    fn empty_and_long_payloads_travel() {
        for payload in [String::new(), "x".repeat(MAX_PAYLOAD_CHARS)] {
            let params = RingParams {
                n: 4,
                m: 3,
                payload,
            };
            assert_eq!(
                run(Variant::Default, &params).unwrap().count("hops"),
                Some(12)
            );
        }
    }

    #[test]
    fn validates_params() {
        assert_eq!(
            params(json!({"n": 3, "m": 2, "payload": "BOO!"})).unwrap(),
            ring(3, 2)
        );
        let error = params(json!({"n": 1, "m": 2, "payload": "BOO!"})).unwrap_err();
        assert_eq!(error.kind, ErrorKind::BadParams);
        assert!(
            error.message.starts_with("n = 1 is out of range"),
            "{}",
            error.message
        );
        assert!(params(json!({"n": 2, "m": 0, "payload": ""})).is_err());
        assert!(params(json!({"n": 2, "m": 1, "payload": 5})).is_err());
        assert!(params(json!({"n": 2, "m": 1})).is_err());
        let error = params(json!({"n": 2, "m": 1, "payload": "", "laps": 3})).unwrap_err();
        assert!(error.message.contains("laps"), "{}", error.message);
    }

    #[test]
    fn ranges_agree_with_the_spec() {
        let spec: Value =
            serde_json::from_str(include_str!("../../../spec/workloads/ring.json")).unwrap();
        let p = &spec["params"];
        assert_eq!(p["n"]["minimum"], MIN_N);
        assert_eq!(p["n"]["maximum"], MAX_N);
        assert_eq!(p["m"]["minimum"], MIN_M);
        assert_eq!(p["m"]["maximum"], MAX_M);
        assert_eq!(p["payload"]["maxLength"], MAX_PAYLOAD_CHARS);
        let names: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(names.len(), PARAM_NAMES.len());
        assert!(names.iter().all(|name| PARAM_NAMES.contains(name)));
    }
}
