//! The server half (`msgbench-rust --serve`): reads the worker's request on stdin,
//! listens on 0.0.0.0:`port`, prints `{"type":"listening","port":P}`, accepts
//! exactly `sockets` connections and runs one tokio task per connection, then
//! prints `{"type":"served","messages":M,"bytes":B}` (what it received, all
//! connections together) and exits. A thread watches stdin: when the worker closes
//! it (or dies), the server exits at once. Every wait has a limit (accept: 60 s;
//! a connection standing still: 60 to 120 s), then an error line.
//!
//! - echo (TCP_NODELAY on): read a frame (`read_exact` of the header, then of the
//!   payload, through a tokio `BufReader`), write it back with one `write_all`;
//!   until the client closes the socket at a frame boundary.
//! - flow: read every frame and discard it (its payload in pieces of at most
//!   64 KiB), counting; at the end of the stream, write the 1-byte ack.

use super::wire::{ACK, Failure, HEADER_BYTES, IdleLimit, announced_length};
use super::{ACCEPT_LIMIT, DISCARD_CHUNK, IDLE_LIMIT, Mode, Served, SocketParams, check_fits};
use crate::stdin_watch;
use crate::variant::{Variant, Workload, tokio_net_runtime};
use msgbench_kit::measure::mem_available_bytes;
use msgbench_kit::protocol::{self, WorkerError};
use serde_json::json;
use std::io::{self, Write};
use std::process::{self, ExitCode};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::ReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::timeout;

/// `--serve`: one request line on stdin, JSON lines on stdout, exit status 0 after
/// a `served` or an `error` line (1 if stdin closed first).
pub fn main() -> ExitCode {
    let mut request_line = String::new();
    if let Err(err) = io::stdin().read_line(&mut request_line) {
        eprintln!("msgbench-rust --serve: cannot read the request: {err}");
    }
    // The request line was taken through the same (buffered) stdin.
    stdin_watch::exit_when_stdin_closes("msgbench-rust --serve", 1);
    let limits = ServerLimits {
        accept: ACCEPT_LIMIT,
        idle: IDLE_LIMIT,
    };
    let last = match serve(&request_line, limits, emit) {
        Ok(served) => served_line(served),
        Err(error) => protocol::error_line(&error),
    };
    emit(&last);
    ExitCode::SUCCESS
}

/// One JSON line on stdout, flushed. A server whose stdout is gone has no one to
/// serve: it exits.
fn emit(line: &str) {
    let mut out = io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        process::exit(1);
    }
}

pub fn listening_line(port: u16) -> String {
    json!({"type": "listening", "port": port}).to_string()
}

pub fn served_line(served: Served) -> String {
    json!({"type": "served", "messages": served.messages, "bytes": served.bytes}).to_string()
}

#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub accept: Duration,
    pub idle: Duration,
}

/// Checks the request, then serves it on the variant's tokio runtime; `emit` gets
/// the `listening` line.
pub fn serve(
    request_line: &str,
    limits: ServerLimits,
    emit: impl FnOnce(&str),
) -> Result<Served, WorkerError> {
    let request = protocol::parse_request(request_line).map_err(|(_, error)| error)?;
    if Workload::from_name(&request.workload) != Some(Workload::Socket) {
        return Err(WorkerError::unsupported(format!(
            "the server half serves socket only, not {:?}",
            request.workload
        )));
    }
    let variant = Variant::from_options(Workload::Socket, &request.options)?;
    let params = SocketParams::from_json(&request.params)?;
    check_fits(params.server_bytes(), mem_available_bytes())?;
    let runtime = tokio_net_runtime(variant.scheduler())?;
    let outcome = runtime.block_on(serve_connections(&params, limits, emit));
    drop(runtime);
    outcome
}

async fn serve_connections(
    params: &SocketParams,
    limits: ServerLimits,
    emit: impl FnOnce(&str),
) -> Result<Served, WorkerError> {
    let listener = TcpListener::bind(("0.0.0.0", params.port))
        .await
        .map_err(|err| bind_error(params.port, &err))?;
    let port = listener
        .local_addr()
        .map_err(|err| WorkerError::internal(format!("cannot read the listening port: {err}")))?
        .port();
    emit(&listening_line(port));

    let mut handlers = JoinSet::new();
    for socket in 0..params.sockets {
        let (stream, _) = timeout(limits.accept, listener.accept())
            .await
            .map_err(|_| {
                WorkerError::internal(format!(
                    "accepted {socket} of {} connections; no other came within {} s",
                    params.sockets,
                    limits.accept.as_secs_f64()
                ))
            })?
            .map_err(|err| {
                WorkerError::resource(format!(
                    "accepted {socket} of {} connections, then: {err}",
                    params.sockets
                ))
            })?;
        if params.mode == Mode::Echo {
            stream.set_nodelay(true).map_err(|err| {
                WorkerError::internal(format!("socket {socket}: cannot set TCP_NODELAY: {err}"))
            })?;
        }
        let connection = Connection {
            socket,
            size: params.size,
            idle: limits.idle,
        };
        match params.mode {
            Mode::Echo => handlers.spawn(async move { connection.echo(stream).await }),
            Mode::Flow => handlers.spawn(async move { connection.flow(stream).await }),
        };
    }
    drop(listener);

    let mut served = Served {
        messages: 0,
        bytes: 0,
    };
    while let Some(joined) = handlers.join_next().await {
        let outcome = joined.unwrap_or_else(|err| {
            Err(WorkerError::internal(format!(
                "a connection task failed: {err}"
            )))
        });
        match outcome {
            Ok(counted) => {
                served.messages += counted.messages;
                served.bytes += counted.bytes;
            }
            Err(error) => {
                handlers.abort_all();
                return Err(error);
            }
        }
    }
    Ok(served)
}

fn bind_error(port: u16, err: &io::Error) -> WorkerError {
    if err.kind() == io::ErrorKind::AddrInUse {
        WorkerError::resource(format!(
            "port {port} is in use (bind 0.0.0.0:{port}: {err}); give another port, or 0 for any free one"
        ))
    } else {
        WorkerError::resource(format!("cannot listen on 0.0.0.0:{port}: {err}"))
    }
}

/// One accepted connection, served by its own task.
struct Connection {
    socket: usize,
    size: usize,
    idle: Duration,
}

impl Connection {
    fn failed(&self, counted: u64, what: &str, failure: &Failure) -> WorkerError {
        WorkerError::internal(format!(
            "socket {} failed after {counted} messages ({what}: {})",
            self.socket,
            failure.describe()
        ))
    }

    fn check_length(&self, header: [u8; HEADER_BYTES], counted: u64) -> Result<(), WorkerError> {
        let length = announced_length(header);
        if length == self.size {
            Ok(())
        } else {
            Err(WorkerError::internal(format!(
                "socket {}: message {counted} announced {length} bytes, the request says size {}",
                self.socket, self.size
            )))
        }
    }

    /// The next frame's header, its length checked; None at the end of the stream
    /// (the client closes its socket at a frame boundary when it is done).
    async fn next_header(
        &self,
        reader: &mut BufReader<ReadHalf<'_>>,
        idle: &mut IdleLimit,
        counted: u64,
    ) -> Result<Option<[u8; HEADER_BYTES]>, WorkerError> {
        let at_end = idle
            .io(reader.fill_buf())
            .await
            .map_err(|failure| self.failed(counted, "reading", &failure))?
            .is_empty();
        if at_end {
            return Ok(None);
        }
        let mut header = [0u8; HEADER_BYTES];
        idle.io(reader.read_exact(&mut header))
            .await
            .map_err(|failure| self.failed(counted, "reading a header", &failure))?;
        self.check_length(header, counted)?;
        Ok(Some(header))
    }

    async fn echo(self, mut stream: TcpStream) -> Result<Served, WorkerError> {
        let (reader, mut writer) = stream.split();
        let mut reader = BufReader::new(reader);
        let mut frame = vec![0u8; HEADER_BYTES + self.size];
        let mut idle = IdleLimit::new(self.idle);
        let mut served = Served {
            messages: 0,
            bytes: 0,
        };
        while let Some(header) = self
            .next_header(&mut reader, &mut idle, served.messages)
            .await?
        {
            frame[..HEADER_BYTES].copy_from_slice(&header);
            idle.io(reader.read_exact(&mut frame[HEADER_BYTES..]))
                .await
                .map_err(|failure| self.failed(served.messages, "reading a payload", &failure))?;
            served.messages += 1;
            served.bytes += self.size as u64;
            idle.io(writer.write_all(&frame))
                .await
                .map_err(|failure| self.failed(served.messages, "echoing", &failure))?;
        }
        Ok(served)
    }

    async fn flow(self, mut stream: TcpStream) -> Result<Served, WorkerError> {
        let (reader, mut writer) = stream.split();
        let mut reader = BufReader::new(reader);
        let mut discard = vec![0u8; self.size.min(DISCARD_CHUNK)];
        let mut idle = IdleLimit::new(self.idle);
        let mut served = Served {
            messages: 0,
            bytes: 0,
        };
        while self
            .next_header(&mut reader, &mut idle, served.messages)
            .await?
            .is_some()
        {
            let mut left = self.size;
            while left > 0 {
                let piece = left.min(discard.len());
                idle.io(reader.read_exact(&mut discard[..piece]))
                    .await
                    .map_err(|failure| {
                        self.failed(served.messages, "reading a payload", &failure)
                    })?;
                left -= piece;
            }
            served.messages += 1;
            served.bytes += self.size as u64;
        }
        // The last byte has arrived: tell the client.
        idle.io(writer.write_all(&[ACK]))
            .await
            .map_err(|failure| self.failed(served.messages, "acknowledging", &failure))?;
        Ok(served)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgbench_kit::protocol::ErrorKind;

    fn request_line(mode: &str, port: u16) -> String {
        let mut params = super::super::tests::request(mode, 16, 64, 1);
        params["port"] = json!(port);
        json!({"workload": "socket", "variant": "current_thread",
               "options": {"runtime": "current_thread"}, "params": params})
        .to_string()
    }

    const SHORT: ServerLimits = ServerLimits {
        accept: Duration::from_millis(200),
        idle: Duration::from_millis(200),
    };

    #[test]
    fn a_port_in_use_is_a_resource_error() {
        let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = serve(&request_line("echo", port), SHORT, |_| {
            panic!("it cannot listen")
        })
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(
            error.message.starts_with(&format!("port {port} is in use")),
            "{error}"
        );
    }

    #[test]
    fn no_connection_is_an_error_after_the_accept_limit() {
        let mut said = String::new();
        let error = serve(&request_line("flow", 0), SHORT, |line| {
            said = line.to_string()
        })
        .unwrap_err();
        assert!(said.contains("\"listening\""), "{said}");
        assert!(
            error.message.contains("accepted 0 of 1 connections"),
            "{error}"
        );
    }

    #[test]
    fn other_workloads_and_variants_are_refused() {
        let line = request_line("echo", 0).replace(
            "\"runtime\":\"current_thread\"",
            "\"runtime\":\"os_threads\"",
        );
        let error = serve(&line, SHORT, |_| {}).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
        let line = request_line("echo", 0).replace("\"socket\"", "\"ring\"");
        assert_eq!(
            serve(&line, SHORT, |_| {}).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        assert_eq!(
            serve("", SHORT, |_| {}).unwrap_err().kind,
            ErrorKind::Internal
        );
    }

    #[test]
    fn lines_have_the_protocol_shapes() {
        assert_eq!(listening_line(80), r#"{"port":80,"type":"listening"}"#);
        let served = served_line(Served {
            messages: 2,
            bytes: 32,
        });
        let value: serde_json::Value = serde_json::from_str(&served).unwrap();
        assert_eq!(value["type"], "served");
        assert_eq!(value["messages"], 2);
        assert_eq!(value["bytes"], 32);
    }
}
