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

use crate::variant::{Variant, Workload, tokio_runtime};
use msgbench_kit::measure::{Stopwatch, nanos, peak_rss_bytes};
use msgbench_kit::protocol::{Measurement, Request, WorkerError};
use serde::Deserialize;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// spec/workloads/ring.json's params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingParams {
    /// Processes in the ring, the root included.
    pub n: u64,
    /// Laps of the token.
    pub m: u64,
    /// What travels with the lap count (the seed's "BOO!").
    pub payload: String,
}

/// What a link task may receive.
#[derive(Debug)]
enum RingMessage {
    /// Phase 1, to the predecessor: "send to me from now on". `links` counts the
    /// links from the sender to the end of the chain, the sender included.
    Connect { successor: LinkSender, links: u64 },
    /// Phase 2: the seed's `{Laps, Payload}`. The payload String is moved from task
    /// to task, as ownership passes in Rust; nothing is shared between tasks.
    Token(u64, String),
    /// After timing: the hops counted so far; each link adds its own and exits.
    Collect { hops: u64 },
}

type LinkSender = UnboundedSender<RingMessage>;

/// The worker's ring: the request's variant and params, one measurement.
pub fn run(request: &Request) -> Result<Measurement, WorkerError> {
    let variant = Variant::from_options(Workload::Ring, &request.options)?;
    measure(variant, &request.params()?)
}

/// Runs one measurement on the variant's tokio runtime. The root is a task like the
/// links (not the thread blocked in block_on), so on the multi-thread runtime it is
/// scheduled by the same workers. The harness derives hops_per_s and the rest.
pub fn measure(variant: Variant, params: &RingParams) -> Result<Measurement, WorkerError> {
    let runtime = tokio_runtime(variant.scheduler(), false)?;
    let params = params.clone();
    let outcome = runtime.block_on(async move { tokio::spawn(root(params)).await });
    drop(runtime);
    let mut measurement =
        outcome.map_err(|err| WorkerError::internal(format!("the ring root failed: {err}")))??;
    (measurement.measured).push(("peak_rss_bytes", peak_rss_bytes().into()));
    Ok(measurement)
}

fn ring_broke(phase: &str) -> WorkerError {
    WorkerError::internal(format!(
        "the ring broke during {phase}: a link task ended early"
    ))
}

/// The seed's `start/2` and `lapCounter/1`: both phases' clocks, and the counts the
/// tasks themselves kept (token sends by the root plus forwards by every link, laps
/// the root saw come back, tasks that joined the ring).
async fn root(params: RingParams) -> Result<Measurement, WorkerError> {
    let (me, mut inbox) = unbounded_channel();
    let creation = Stopwatch::start();
    // As the seed's spawn(newLink, [N-1, self(), self()]): the root is both the
    // predecessor of the first link and the successor of the last one.
    spawn_link(params.n - 1, me.clone(), me);
    let Some(RingMessage::Connect { successor, links }) = inbox.recv().await else {
        return Err(ring_broke("creation"));
    };
    let create = creation.stop();

    let passing = Stopwatch::start();
    let (mut hops, mut laps) = (0, 0);
    let mut token = RingMessage::Token(params.m, params.payload);
    loop {
        hops += 1;
        successor.send(token).map_err(|_| ring_broke("passing"))?;
        let Some(RingMessage::Token(left, payload)) = inbox.recv().await else {
            return Err(ring_broke("passing"));
        };
        laps += 1;
        if left == 1 {
            break;
        }
        token = RingMessage::Token(left - 1, payload);
    }
    let pass = passing.stop();

    successor
        .send(RingMessage::Collect { hops })
        .map_err(|_| ring_broke("collection"))?;
    let Some(RingMessage::Collect { hops }) = inbox.recv().await else {
        return Err(ring_broke("collection"));
    };
    Ok(Measurement {
        measured: vec![
            ("create_wall_ns", nanos(create.wall)),
            ("create_cpu_ns", nanos(create.cpu)),
            ("pass_wall_ns", nanos(pass.wall)),
            ("pass_cpu_ns", nanos(pass.cpu)),
        ],
        verify: vec![("hops", hops), ("laps", laps), ("links", links + 1)],
        histograms: vec![],
    })
}

/// A separate item so that `link`'s future type does not depend on itself (the
/// compiler could not then prove it `Send` for tokio::spawn).
fn spawn_link(remaining: u64, predecessor: LinkSender, root: LinkSender) {
    tokio::spawn(link(remaining, predecessor, root));
}

/// The seed's `newLink/3` and `passMsgOn/1`: `remaining` counts this link and those
/// it will spawn; once connected it forwards whatever arrives, counting the hops. A
/// link that cannot send returns, dropping its Senders, so a broken ring ends with
/// the root's inbox closing instead of hanging.
async fn link(remaining: u64, predecessor: LinkSender, root: LinkSender) {
    let (me, mut inbox) = unbounded_channel();
    let (successor, links) = if remaining == 1 {
        (root, 1) // the last link closes the ring onto the root
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
    let mut hops: u64 = 0;
    while let Some(message) = inbox.recv().await {
        if let RingMessage::Collect { hops: before } = message {
            let _ = successor.send(RingMessage::Collect {
                hops: before + hops,
            });
            return;
        }
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
                let result = measure(variant, &ring(n, m)).unwrap();
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
        let result = measure(Variant::CURRENT_THREAD, &ring(5, 2)).unwrap();
        let spec: serde_json::Value =
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
                measure(Variant::DEFAULT, &params).unwrap().count("hops"),
                Some(12)
            );
        }
    }
}
