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

use crate::measure::{Elapsed, Stopwatch, nanos, peak_rss_bytes};
use crate::params::ParamReader;
use crate::protocol::{Measurement, WorkerError};
use crate::variant::{Variant, tokio_runtime};
use serde_json::{Map, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

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
            n: reader.integer("n")?,
            m: reader.integer("m")?,
            payload: reader.string("payload")?,
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
    Ok(measurement(&report))
}

/// The raw facts; the harness derives hops_per_s (n * m / pass_wall) and the rest.
fn measurement(report: &RingReport) -> Measurement {
    Measurement {
        measured: vec![
            ("create_wall_ns", nanos(report.create.wall)),
            ("create_cpu_ns", nanos(report.create.cpu)),
            ("pass_wall_ns", nanos(report.pass.wall)),
            ("pass_cpu_ns", nanos(report.pass.cpu)),
            ("peak_rss_bytes", peak_rss_bytes().into()),
        ],
        verify: vec![
            ("hops", report.hops),
            ("laps", report.laps),
            ("links", report.links),
        ],
        histograms: vec![],
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

    fn ring(n: u64, m: u64) -> RingParams {
        RingParams {
            n,
            m,
            payload: "BOO!".to_string(),
        }
    }

    #[test]
    fn small_rings_count_every_hop_lap_and_link() {
        for variant in [Variant::DEFAULT, Variant::CURRENT_THREAD] {
            for (n, m) in [(2, 1), (2, 5), (3, 3), (10, 1), (1000, 7)] {
                let result = run(variant, &ring(n, m)).unwrap();
                assert_eq!(result.count("hops"), Some(n * m), "{variant:?} n={n} m={m}");
                assert_eq!(result.count("laps"), Some(m));
                assert_eq!(result.count("links"), Some(n));
                assert!(result.fact("pass_wall_ns").unwrap().as_u64().unwrap() > 0);
                assert!(result.fact("peak_rss_bytes").unwrap().as_u64().unwrap() > 0);
            }
        }
    }

    #[test]
    fn reports_the_spec_raw_facts_and_no_metric() {
        let result = run(Variant::CURRENT_THREAD, &ring(5, 2)).unwrap();
        let spec: Value =
            serde_json::from_str(include_str!("../../../spec/workloads/ring.json")).unwrap();
        let mut want: Vec<&str> = spec["measured"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut got: Vec<&str> = result.measured.iter().map(|(name, _)| *name).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
    }

    #[test]
    fn empty_and_long_payloads_travel() {
        for payload in [String::new(), "x".repeat(65_536)] {
            // the spec's longest
            let params = RingParams {
                n: 4,
                m: 3,
                payload,
            };
            assert_eq!(
                run(Variant::DEFAULT, &params).unwrap().count("hops"),
                Some(12)
            );
        }
    }
}
