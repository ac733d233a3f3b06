//! The socket workload (seed 002, the Erlang inet driver speed test): a sequence of
//! messages of one size on `sockets` TCP connections, echoed or streamed one way.
//!
//! The worker is the client (`client.rs`): it starts the server half (`server.rs`,
//! this binary with `--serve`) from the harness's MSGBENCH_PEER_* environment
//! (`peer.rs`), hands it the request, reads its port, connects `sockets` tokio
//! `TcpStream`s and runs one task per socket; the server runs one task per
//! connection. Framing and the per-socket time limit are in `wire.rs`.

mod client;
mod peer;
pub mod server;
mod wire;

use crate::measure::{mem_available_bytes, peak_rss_bytes};
use crate::params::ParamReader;
use crate::protocol::{Measurement, Request, WorkerError};
use crate::variant::Variant;
pub use peer::{PeerCommand, Served};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Accepted ranges, as in spec/workloads/socket.json (a unit test checks they agree).
pub const MIN_SIZE: u64 = 1;
pub const MAX_SIZE: u64 = 67_108_864;
pub const MIN_TOTAL_BYTES: u64 = 1;
pub const MAX_TOTAL_BYTES: u64 = 17_179_869_184;
pub const MIN_SOCKETS: u64 = 1;
pub const MAX_SOCKETS: u64 = 1024;
pub const MAX_PORT: u64 = 65_535;

const PARAM_NAMES: [&str; 8] = [
    "mode",
    "size",
    "total_bytes",
    "sockets",
    "data",
    "placement",
    "check_content",
    "port",
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

#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl SocketParams {
    pub fn from_json(params: &Map<String, Value>) -> Result<Self, WorkerError> {
        let reader = ParamReader::new("socket", params, &PARAM_NAMES)?;
        let mode = match reader.choice("mode", &["echo", "flow"])? {
            "flow" => Mode::Flow,
            _ => Mode::Echo,
        };
        let size = reader.integer("size", MIN_SIZE, MAX_SIZE)?;
        let total_bytes = reader.integer("total_bytes", MIN_TOTAL_BYTES, MAX_TOTAL_BYTES)?;
        let sockets = reader.integer("sockets", MIN_SOCKETS, MAX_SOCKETS)?;
        let data = reader.choice("data", &["binary", "list"])?;
        let placement = reader.choice("placement", &["local", "remote"])?;
        let check_content = reader.integer("check_content", 0, 1)? == 1;
        let port = reader.integer("port", 0, MAX_PORT)?;
        if size > total_bytes {
            return Err(WorkerError::bad_params(format!(
                "size = {size} is out of range: size must not exceed total_bytes ({total_bytes})"
            )));
        }
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
pub fn run(
    variant: Variant,
    request: &Request,
    params: &SocketParams,
) -> Result<Measurement, WorkerError> {
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

fn measurement(
    params: &SocketParams,
    run: &client::ClientRun,
    served: Served,
    peak_rss: u64,
) -> Measurement {
    let sockets = run.sockets.len().max(1) as f64;
    let elapsed_ms = run
        .sockets
        .iter()
        .map(|socket| socket.elapsed.as_secs_f64() * 1e3)
        .sum::<f64>()
        / sockets;
    let per_message_us = run
        .sockets
        .iter()
        .map(|socket| socket.elapsed.as_secs_f64() * 1e6 / socket.messages_sent.max(1) as f64)
        .sum::<f64>()
        / sockets;
    let sent: u64 = run.messages_sent();
    let bytes_sent: u64 = run.sockets.iter().map(|socket| socket.bytes_sent).sum();
    let mismatches: u64 = run.sockets.iter().map(|socket| socket.mismatches).sum();
    // Echo: what came back to the client; flow: what the server counted.
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
    let wall = run.wall.as_secs_f64();
    Measurement {
        metrics: vec![
            ("elapsed_ms", elapsed_ms),
            ("round_trip_us", per_message_us),
            ("bandwidth_bytes_per_s", bytes_received as f64 / wall),
            ("msgs_per_s", received as f64 / wall),
            ("peak_rss_bytes", peak_rss as f64),
        ],
        verify: vec![
            ("messages_sent", sent),
            ("messages_received", received),
            ("bytes_sent", bytes_sent),
            ("bytes_received", bytes_received),
            ("content_mismatches", mismatches),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;

    pub(super) fn request(
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
    fn validates_params() {
        let cases = [
            ("mode", json!("ping")),
            ("size", json!(0)),
            ("size", json!(67_108_865)),
            ("total_bytes", json!(0)),
            ("total_bytes", json!(17_179_869_185u64)),
            ("sockets", json!(0)),
            ("sockets", json!(1025)),
            ("data", json!("string")),
            ("placement", json!("moon")),
            ("check_content", json!(2)),
            ("port", json!(-1)),
            ("port", json!(65_536)),
        ];
        for (name, value) in cases {
            let mut request = request("echo", 16, 1 << 20, 1);
            request[name] = value.clone();
            let error = SocketParams::from_json(&request).unwrap_err();
            assert_eq!(error.kind, ErrorKind::BadParams, "{name} = {value}");
            assert!(
                error.message.starts_with(&format!("{name} = ")),
                "{}",
                error.message
            );
        }
        let error = SocketParams::from_json(&request("echo", 2048, 1024, 1)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::BadParams);
        assert_eq!(
            error.message,
            "size = 2048 is out of range: size must not exceed total_bytes (1024)"
        );
        let mut list = request("echo", 16, 1024, 1);
        list["data"] = json!("list");
        let error = SocketParams::from_json(&list).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
        assert!(error.message.contains("list"), "{}", error.message);
        // bad_params wins over unsupported.
        list["size"] = json!(0);
        assert_eq!(
            SocketParams::from_json(&list).unwrap_err().kind,
            ErrorKind::BadParams
        );
        let mut unknown = request("echo", 16, 1024, 1);
        unknown.insert("nodelay".to_string(), json!(true));
        assert!(
            SocketParams::from_json(&unknown)
                .unwrap_err()
                .message
                .contains("nodelay")
        );
        // The edges of every range are accepted.
        let mut edges = request("flow", 67_108_864, 17_179_869_184, 1024);
        edges["port"] = json!(65_535);
        edges["check_content"] = json!(0);
        edges["placement"] = json!("remote");
        let params = SocketParams::from_json(&edges).unwrap();
        assert_eq!(params.port, 65_535);
        assert!(!params.check_content && !params.local);
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
    fn metrics_follow_the_spec_formulas() {
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
        };
        let served = Served {
            messages: 20,
            bytes: 2000,
        };
        let result = measurement(&params, &run, served, 4096);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.abs().max(1.0);
        assert!(close(result.metric("elapsed_ms").unwrap(), 20.0));
        // (1000 us + 3000 us) / 2
        assert!(close(result.metric("round_trip_us").unwrap(), 2000.0));
        assert!(close(
            result.metric("bandwidth_bytes_per_s").unwrap(),
            50_000.0
        ));
        assert!(close(result.metric("msgs_per_s").unwrap(), 500.0));
        assert_eq!(result.metric("peak_rss_bytes"), Some(4096.0));
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
        assert!(close(
            result.metric("bandwidth_bytes_per_s").unwrap(),
            47_500.0
        ));
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/socket.json")).unwrap();
        for metric in spec["metrics"].as_object().unwrap().keys() {
            assert!(result.metric(metric).is_some(), "{metric}");
        }
        for rule in spec["verify"].as_array().unwrap() {
            let rule = rule["rule"].as_str().unwrap();
            let name = rule.split_whitespace().next().unwrap();
            assert!(result.count(name).is_some(), "{rule}");
        }
    }

    #[test]
    fn ranges_agree_with_the_spec() {
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/socket.json")).unwrap();
        let p = &spec["params"];
        assert_eq!(p["mode"]["enum"], json!(["echo", "flow"]));
        assert_eq!(p["size"]["minimum"], MIN_SIZE);
        assert_eq!(p["size"]["maximum"], MAX_SIZE);
        assert_eq!(p["total_bytes"]["minimum"], MIN_TOTAL_BYTES);
        assert_eq!(p["total_bytes"]["maximum"], MAX_TOTAL_BYTES);
        assert_eq!(p["sockets"]["minimum"], MIN_SOCKETS);
        assert_eq!(p["sockets"]["maximum"], MAX_SOCKETS);
        assert_eq!(p["data"]["enum"], json!(["binary", "list"]));
        assert_eq!(p["placement"]["enum"], json!(["local", "remote"]));
        assert_eq!(p["check_content"]["minimum"], 0);
        assert_eq!(p["check_content"]["maximum"], 1);
        assert_eq!(p["port"]["minimum"], 0);
        assert_eq!(p["port"]["maximum"], MAX_PORT);
        assert_eq!(spec["peer"], true);
        let names: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(names.len(), PARAM_NAMES.len());
        assert!(names.iter().all(|name| PARAM_NAMES.contains(name)));
    }
}
