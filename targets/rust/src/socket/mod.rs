//! The socket workload (seed 002, the Erlang inet driver speed test): a sequence of
//! messages of one size on `sockets` TCP connections, echoed or streamed one way.
//!
//! The worker is the client (`client.rs`): it starts the server half (`server.rs`,
//! this binary with `--serve`) from the harness's MSGBENCH_PEER_* environment
//! (`peer.rs`), hands it the request, reads its port, connects `sockets` tokio
//! `TcpStream`s and runs one task per socket (in open loop, echo at a rate, two:
//! `openloop.rs`, paced by `pacer.rs`); the server runs one task per connection.
//! Framing and the per-socket time limit are in `wire.rs`.

mod client;
mod openloop;
mod pacer;
mod peer;
pub mod server;
mod wire;

use crate::variant::{Variant, Workload};
use msgbench_kit::measure::{mem_available_bytes, nanos, peak_rss_bytes};
use msgbench_kit::params::ParamReader;
use msgbench_kit::protocol::{Measurement, Request, WorkerError};
pub use peer::{PeerCommand, Served};
use serde_json::{Map, Value, json};
use std::time::Duration;

const PARAM_NAMES: [&str; 9] = [
    "mode",
    "size",
    "total_bytes",
    "sockets",
    "data",
    "placement",
    "check_content",
    "port",
    "rate",
];

/// How long the worker waits for the server's `listening` line.
const LISTEN_LIMIT: Duration = Duration::from_secs(30);
/// How long a connect may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(30);
/// How long an accept may wait for the next connection (server).
const ACCEPT_LIMIT: Duration = Duration::from_secs(60);
/// How long a socket may stand still (no read or write completing): one to two of
/// these, see `wire::IdleLimit`.
const IDLE_LIMIT: Duration = Duration::from_secs(60);
/// How long the worker waits for `served` once its sockets are done, and then for
/// the server to exit.
const SERVED_LIMIT: Duration = Duration::from_secs(60);
const EXIT_LIMIT: Duration = Duration::from_secs(10);
/// After a socket failed: how long to wait for the server to say why.
const SERVER_ERROR_GRACE: Duration = Duration::from_secs(2);

/// Bytes a flow server reads a payload in (it discards them): at most this much
/// buffer per connection, whatever the size.
const DISCARD_CHUNK: usize = 64 * 1024;
/// A tokio BufReader's buffer (its default), one per socket at each end.
const READ_BUFFER: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One message at a time, echoed back before the next is sent.
    Echo,
    /// Every message as fast as it goes; the server reads and discards.
    Flow,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SocketParams {
    pub mode: Mode,
    /// Payload bytes per message, framing excluded.
    pub size: usize,
    pub total_bytes: u64,
    pub sockets: usize,
    /// Whether the server half stands on this host (both halves' memory counts here).
    pub local: bool,
    /// Echo: compare every echoed byte (else the first and last byte).
    pub check_content: bool,
    /// The server's port; 0 = any free port.
    pub port: u16,
    /// Echo: round trips per second offered by all sockets together, open loop; 0
    /// (absent from the request, as the spec's default): closed loop.
    pub rate: f64,
}

impl SocketParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("socket", params, &PARAM_NAMES)?;
        let mode = match reader.choice("mode", &["echo", "flow"])? {
            "flow" => Mode::Flow,
            _ => Mode::Echo,
        };
        let size = reader.integer("size")?;
        let total_bytes = reader.integer("total_bytes")?;
        let sockets = reader.integer("sockets")?;
        let data = reader.choice("data", &["binary", "list"])?;
        let placement = reader.choice("placement", &["local", "remote"])?;
        let check_content = reader.integer("check_content")? == 1;
        let port = reader.integer("port")?;
        let rate = match reader.optional("rate") {
            None => 0.0,
            Some(_) => reader.number("rate")?,
        };
        if data == "list" {
            return Err(WorkerError::unsupported(
                "data = \"list\": lists of bytes are an Erlang notion; tokio sockets send byte buffers (data = \"binary\") only",
            ));
        }
        Ok(Self {
            mode,
            size: size as usize,
            total_bytes,
            sockets: sockets as usize,
            local: placement == "local",
            check_content,
            port: port as u16,
            rate,
        })
    }

    /// Messages in each socket's sequence: max(1, total_bytes / size).
    pub fn messages_per_socket(&self) -> u64 {
        (self.total_bytes / self.size as u64).max(1)
    }

    /// Bytes the client holds: the prepared frames, and per socket its read buffer
    /// and (echo) a buffer for the echoed payload.
    fn client_bytes(&self) -> u64 {
        let per_socket = READ_BUFFER as u64
            + match self.mode {
                Mode::Echo => self.size as u64,
                Mode::Flow => 0,
            };
        wire::frame_table_bytes(self.size, self.messages_per_socket())
            + self.sockets as u64 * per_socket
    }

    /// Bytes the server holds: per connection its read buffer and a frame buffer
    /// (echo) or a discard buffer (flow).
    fn server_bytes(&self) -> u64 {
        let per_socket = READ_BUFFER as u64
            + match self.mode {
                Mode::Echo => (wire::HEADER_BYTES + self.size) as u64,
                Mode::Flow => self.size.min(DISCARD_CHUNK) as u64,
            };
        self.sockets as u64 * per_socket
    }
}

/// Refuses a run whose buffers cannot fit in the memory available. `need` is what
/// this process (and, for a local client, its server too) will allocate.
fn check_fits(need: u64, available: Option<u64>) -> Result<(), WorkerError> {
    match available {
        Some(available) if need > available => Err(WorkerError::resource(format!(
            "sockets * size: the buffers need about {} MiB, more than the {} MiB available (MemAvailable)",
            need.div_ceil(1 << 20),
            available >> 20
        ))),
        _ => Ok(()),
    }
}

/// The worker: runs the client against a server half it starts, and reports.
pub fn run(request: &Request) -> Result<Measurement, WorkerError> {
    let variant = Variant::from_options(Workload::Socket, &request.options)?;
    let params = &SocketParams::from_json(&request.params)?;
    let need = params.client_bytes()
        + if params.local {
            params.server_bytes()
        } else {
            0
        };
    check_fits(need, mem_available_bytes())?;
    // Prepared before the server starts: nothing of this is timed.
    let frames = wire::Frames::new(params.size, params.messages_per_socket());

    let command = PeerCommand::from_env()?;
    let request_line = json!({
        "workload": request.workload,
        "variant": request.variant,
        "options": request.options,
        "params": request.params,
    })
    .to_string();
    let mut peer = peer::Peer::start(&command, &request_line)?;
    let port = peer.wait_listening(LISTEN_LIMIT)?;
    let limits = client::Limits {
        connect: CONNECT_LIMIT,
        idle: IDLE_LIMIT,
    };
    let run = match client::run(
        variant.scheduler(),
        peer.host(),
        port,
        params,
        frames,
        limits,
    ) {
        Ok(run) => run,
        // The server may know why a socket failed (and its error names the cause).
        Err(error) => return Err(peer.reported_error(SERVER_ERROR_GRACE).unwrap_or(error)),
    };
    let served = peer.wait_served(SERVED_LIMIT)?;
    peer.wait_exit(EXIT_LIMIT)?;
    drop(peer);
    if params.mode == Mode::Echo && served.messages != run.messages_sent() {
        eprintln!(
            "msgbench-rust socket: the server echoed {} messages, the client sent {}",
            served.messages,
            run.messages_sent()
        );
    }
    Ok(measurement(params, &run, served, peak_rss_bytes()))
}

/// The raw facts: each socket's elapsed time and the wall time of the whole
/// parallel sequence; the harness derives the seed's means over sockets and the
/// rates. What was received is counted back at the client in echo, at the server
/// in flow.
fn measurement(
    params: &SocketParams,
    run: &client::ClientRun,
    served: Served,
    peak_rss: u64,
) -> Measurement {
    let elapsed: Vec<Value> = run
        .sockets
        .iter()
        .map(|socket| nanos(socket.elapsed))
        .collect();
    let sent: u64 = run.messages_sent();
    let bytes_sent: u64 = run.sockets.iter().map(|socket| socket.bytes_sent).sum();
    let mismatches: u64 = run.sockets.iter().map(|socket| socket.mismatches).sum();
    let (received, bytes_received) = match params.mode {
        Mode::Echo => (
            run.sockets
                .iter()
                .map(|socket| socket.echoes_received)
                .sum(),
            run.sockets.iter().map(|socket| socket.bytes_received).sum(),
        ),
        Mode::Flow => (served.messages, served.bytes),
    };
    let mut measured = vec![
        ("elapsed_ns", Value::Array(elapsed)),
        ("wall_ns", nanos(run.wall)),
        ("peak_rss_bytes", peak_rss.into()),
    ];
    let mut histograms = vec![];
    if let Some(latency) = &run.latency {
        measured.push(("latency_max_ns", latency.max_nanos().into()));
        histograms.push(("latency_ns", latency.sparse()));
    }
    Measurement {
        measured,
        verify: vec![
            ("messages_sent", sent),
            ("messages_received", received),
            ("bytes_sent", bytes_sent),
            ("bytes_received", bytes_received),
            ("content_mismatches", mismatches),
        ],
        histograms,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use msgbench_kit::protocol::ErrorKind;

    pub(crate) fn request(
        mode: &str,
        size: u64,
        total_bytes: u64,
        sockets: u64,
    ) -> Map<String, Value> {
        json!({
            "mode": mode,
            "size": size,
            "total_bytes": total_bytes,
            "sockets": sockets,
            "data": "binary",
            "placement": "local",
            "check_content": 1,
            "port": 0
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn messages_are_total_over_size_at_least_one() {
        let params = SocketParams::from_json(&request("echo", 1024, 4_194_304, 1)).unwrap();
        assert_eq!(params.messages_per_socket(), 4096);
        let params = SocketParams::from_json(&request("flow", 1000, 2999, 16)).unwrap();
        assert_eq!(params.messages_per_socket(), 2);
        assert_eq!(params.mode, Mode::Flow);
        let params = SocketParams::from_json(&request("echo", 7, 7, 1)).unwrap();
        assert_eq!(params.messages_per_socket(), 1);
    }

    #[test]
    fn buffers_beyond_the_memory_are_a_resource_error() {
        let params = SocketParams::from_json(&request("echo", 1 << 26, 1 << 26, 1024)).unwrap();
        assert!(params.client_bytes() > 64 << 30);
        let error = check_fits(params.client_bytes(), Some(8 << 30)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(
            error.message.contains("sockets * size"),
            "{}",
            error.message
        );
        let small = SocketParams::from_json(&request("flow", 1 << 26, 1 << 26, 16)).unwrap();
        // A flow server discards in 64 KiB pieces, whatever the size.
        assert_eq!(small.server_bytes(), 16 * (64 + 8) * 1024);
        assert!(check_fits(small.server_bytes(), Some(1 << 30)).is_ok());
        assert!(check_fits(u64::MAX, None).is_ok());
    }

    #[test]
    fn reports_the_raw_facts_counted_where_they_arrive() {
        let params = SocketParams::from_json(&request("echo", 100, 1000, 2)).unwrap();
        let socket = |ms: u64| client::SocketRun {
            messages_sent: 10,
            bytes_sent: 1000,
            echoes_received: 10,
            bytes_received: 1000,
            mismatches: 0,
            elapsed: Duration::from_millis(ms),
        };
        let run = client::ClientRun {
            sockets: vec![socket(10), socket(30)],
            wall: Duration::from_millis(40),
            latency: None,
        };
        let served = Served {
            messages: 20,
            bytes: 2000,
        };
        let result = measurement(&params, &run, served, 4096);
        assert_eq!(
            result.fact("elapsed_ns"),
            Some(&json!([10_000_000, 30_000_000]))
        );
        assert_eq!(result.fact("wall_ns"), Some(&json!(40_000_000)));
        assert_eq!(result.fact("peak_rss_bytes"), Some(&json!(4096)));
        assert_eq!(result.count("messages_received"), Some(20));
        assert_eq!(result.count("bytes_received"), Some(2000));
        // Flow: what the server received.
        let flow = SocketParams {
            mode: Mode::Flow,
            ..params
        };
        let served = Served {
            messages: 19,
            bytes: 1900,
        };
        let result = measurement(&flow, &run, served, 4096);
        assert_eq!(result.count("messages_received"), Some(19));
        assert_eq!(result.count("bytes_sent"), Some(2000));
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/socket.json")).unwrap();
        // Closed loop: every fact but the open loop's (optional at rate == 0).
        for (fact, declared) in spec["measured"].as_object().unwrap() {
            let open_loop_only = declared.get("optional").is_some();
            assert_eq!(result.fact(fact).is_some(), !open_loop_only, "{fact}");
        }
        assert!(result.histograms.is_empty());
        for rule in spec["verify"].as_array().unwrap() {
            if rule.get("when").is_some() {
                continue; // the open loop's histogram rule, below
            }
            let rule = rule["rule"].as_str().unwrap();
            let name = rule.split_whitespace().next().unwrap();
            assert!(result.count(name).is_some(), "{rule}");
        }
    }

    #[test]
    fn the_open_loop_reports_its_latencies() {
        let mut params = SocketParams::from_json(&request("echo", 100, 1000, 1)).unwrap();
        assert_eq!(params.rate, 0.0, "absent: closed loop");
        let mut with_rate = request("echo", 100, 1000, 1);
        with_rate.insert("rate".into(), json!(2500.5));
        params = SocketParams::from_json(&with_rate).unwrap();
        assert_eq!(params.rate, 2500.5);
        let mut log = msgbench_kit::histogram::LatencyLog::new();
        for nanos in [30_000, 45_000, 2_000_000] {
            log.record(nanos);
        }
        let mut latency = msgbench_kit::histogram::LatencyHistogram::new();
        latency.merge(&log);
        let run = client::ClientRun {
            sockets: vec![client::SocketRun {
                messages_sent: 3,
                bytes_sent: 300,
                echoes_received: 3,
                bytes_received: 300,
                mismatches: 0,
                elapsed: Duration::from_millis(3),
            }],
            wall: Duration::from_millis(3),
            latency: Some(latency.clone()),
        };
        let served = Served {
            messages: 3,
            bytes: 300,
        };
        let result = measurement(&params, &run, served, 4096);
        assert_eq!(result.fact("latency_max_ns"), Some(&json!(2_000_000)));
        assert_eq!(result.histograms, vec![("latency_ns", latency.sparse())]);
        let counted: u64 = latency.sparse().iter().map(|(_, count)| count).sum();
        assert_eq!(Some(counted), result.count("messages_received"));
    }
}
