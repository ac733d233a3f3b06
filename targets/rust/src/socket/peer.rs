//! The server half as seen from the worker (spec/README.md, "Peers"): started from
//! MSGBENCH_PEER_COMMAND in MSGBENCH_PEER_CWD, fed the request on its stdin (kept
//! open: the server exits when it closes), heard through its stdout's JSON lines.
//! Every wait has a time limit; dropping a `Peer` closes its stdin, waits a little
//! for it to exit and kills it otherwise, so no server outlives its worker's report.

use msgbench_kit::protocol::{ErrorKind, WorkerError};
use serde_json::Value;
use std::env;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

/// Where the server half runs and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerCommand {
    pub argv: Vec<String>,
    pub cwd: Option<String>,
    pub host: String,
}

impl PeerCommand {
    /// From the harness's environment; without it (a worker run by hand), this very
    /// binary with `--serve`, on this host.
    pub fn from_env() -> Result<Self, WorkerError> {
        let host = env::var("MSGBENCH_PEER_HOST")
            .ok()
            .filter(|host| !host.is_empty())
            .unwrap_or_else(|| "127.0.0.1".to_string());
        let cwd = env::var("MSGBENCH_PEER_CWD")
            .ok()
            .filter(|cwd| !cwd.is_empty());
        match env::var("MSGBENCH_PEER_COMMAND") {
            Ok(text) if !text.trim().is_empty() => Ok(Self {
                argv: parse_argv(&text)?,
                cwd,
                host,
            }),
            _ => {
                let exe = env::current_exe().map_err(|err| {
                    WorkerError::internal(format!(
                        "MSGBENCH_PEER_COMMAND is not set and this binary's path is unknown: {err}"
                    ))
                })?;
                Ok(Self {
                    argv: vec![exe.to_string_lossy().into_owned(), "--serve".to_string()],
                    cwd,
                    host,
                })
            }
        }
    }

    fn shown(&self) -> String {
        serde_json::to_string(&self.argv).unwrap_or_default()
    }
}

/// MSGBENCH_PEER_COMMAND: a JSON array of strings, not empty.
pub fn parse_argv(text: &str) -> Result<Vec<String>, WorkerError> {
    let bad = || {
        WorkerError::internal(format!(
            "MSGBENCH_PEER_COMMAND = {text:?} is not a JSON array of strings (the server's argv)"
        ))
    };
    let value: Value = serde_json::from_str(text).map_err(|_| bad())?;
    let argv: Vec<String> = value
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|item| item.as_str().map(str::to_string).ok_or_else(bad))
        .collect::<Result<_, _>>()?;
    if argv.is_empty() {
        return Err(bad());
    }
    Ok(argv)
}

/// A running server half.
pub struct Peer {
    command: PeerCommand,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    exit_status: Option<ExitStatus>,
}

impl Peer {
    /// Starts the server and writes `request_line` to its stdin.
    pub fn start(command: &PeerCommand, request_line: &str) -> Result<Self, WorkerError> {
        let mut process = Command::new(&command.argv[0]);
        process
            .args(&command.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(cwd) = &command.cwd {
            process.current_dir(cwd);
        }
        let mut child = process.spawn().map_err(|err| {
            WorkerError::internal(format!(
                "cannot start the server {} in {}: {err}",
                command.shown(),
                command.cwd.as_deref().unwrap_or(".")
            ))
        })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = channel();
        // Reads the server's lines until its stdout closes (the channel then reports
        // a disconnect). Anything that is not JSON goes to stderr and is ignored.
        thread::Builder::new()
            .name("peer-stdout".to_string())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    match serde_json::from_str::<Value>(&line) {
                        Ok(value) if value.is_object() => {
                            if sender.send(value).is_err() {
                                break;
                            }
                        }
                        _ => eprintln!("msgbench-rust: the server printed a non-JSON line: {line}"),
                    }
                }
            })
            .map_err(|err| {
                WorkerError::resource(format!("cannot start a thread to read the server: {err}"))
            })?;
        let mut peer = Self {
            command: command.clone(),
            stdin: child.stdin.take(),
            child,
            lines,
            exit_status: None,
        };
        let written = peer.stdin.as_mut().map(|stdin| {
            stdin
                .write_all(request_line.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush())
        });
        if let Some(Err(err)) = written {
            // A server that has exited already: waiting for its first line says how.
            eprintln!("msgbench-rust: cannot write the request to the server: {err}");
            drop(peer.stdin.take());
        }
        Ok(peer)
    }

    pub fn host(&self) -> &str {
        &self.command.host
    }

    /// Waits for `{"type":"listening","port":P}`.
    pub fn wait_listening(&mut self, limit: Duration) -> Result<u16, WorkerError> {
        let line = self.wait_for("listening", limit)?;
        line.get("port")
            .and_then(Value::as_u64)
            .filter(|port| (1..=65_535).contains(port))
            .map(|port| port as u16)
            .ok_or_else(|| {
                WorkerError::internal(format!(
                    "the server said it listens but gave no valid port: {line}"
                ))
            })
    }

    /// Waits for `{"type":"served","messages":M,"bytes":B}`.
    pub fn wait_served(&mut self, limit: Duration) -> Result<Served, WorkerError> {
        let line = self.wait_for("served", limit)?;
        let count = |name: &str| {
            line.get(name).and_then(Value::as_u64).ok_or_else(|| {
                WorkerError::internal(format!(
                    "the server's served line has no {name} count: {line}"
                ))
            })
        };
        Ok(Served {
            messages: count("messages")?,
            bytes: count("bytes")?,
        })
    }

    /// An error line the server printed within `limit`, if any (after a socket failed:
    /// the server may know why).
    pub fn reported_error(&mut self, limit: Duration) -> Option<WorkerError> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line["type"] == "error" => return Some(relayed(&line)),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }

    /// Waits for the server to exit on its own, then checks its status.
    pub fn wait_exit(&mut self, limit: Duration) -> Result<(), WorkerError> {
        match self.wait_exit_for(limit) {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(WorkerError::internal(format!(
                "the server {} reported its counts but then exited with {status}",
                self.command.shown()
            ))),
            None => Err(WorkerError::internal(format!(
                "the server {} reported its counts but did not exit within {} s",
                self.command.shown(),
                limit.as_secs_f64()
            ))),
        }
    }

    fn wait_for(&mut self, kind: &str, limit: Duration) -> Result<Value, WorkerError> {
        let expected = format!("{{\"type\":\"{kind}\"}}");
        match self.lines.recv_timeout(limit) {
            Ok(line) if line["type"] == kind => Ok(line),
            Ok(line) if line["type"] == "error" => Err(relayed(&line)),
            Ok(line) => Err(WorkerError::internal(format!(
                "the server printed {line} while the worker waited for {expected}"
            ))),
            Err(RecvTimeoutError::Timeout) => Err(WorkerError::internal(format!(
                "the server {} printed no {expected} line within {} s",
                self.command.shown(),
                limit.as_secs_f64()
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.wait_exit_for(Duration::from_secs(2));
                Err(WorkerError::internal(format!(
                    "the server {} {} before it printed {expected}",
                    self.command.shown(),
                    describe_exit(status)
                )))
            }
        }
    }

    /// Polls for the server's exit for up to `limit`.
    fn wait_exit_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.exit_status {
                return Some(status);
            }
            match self.child.try_wait() {
                Ok(Some(status)) => self.exit_status = Some(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Closing stdin tells the server to stop; a server that does not kill it.
        drop(self.stdin.take());
        if self.wait_exit_for(Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What the server counted, all sockets together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    pub messages: u64,
    pub bytes: u64,
}

/// A server's error line, as the worker's own error.
fn relayed(line: &Value) -> WorkerError {
    let kind = match line["kind"].as_str() {
        Some("unsupported") => ErrorKind::Unsupported,
        Some("resource") => ErrorKind::Resource,
        _ => ErrorKind::Internal,
    };
    let message = line["message"].as_str().unwrap_or("(no message)");
    WorkerError {
        kind,
        message: format!("the server: {message}"),
    }
}

fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        Some(status) => format!("exited ({status})"),
        None => "closed its stdout".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> PeerCommand {
        PeerCommand {
            argv: vec!["sh".to_string(), "-c".to_string(), script.to_string()],
            cwd: None,
            host: "127.0.0.1".to_string(),
        }
    }

    #[test]
    fn argv_must_be_a_json_array_of_strings() {
        assert_eq!(parse_argv(r#"["a","--serve"]"#).unwrap(), ["a", "--serve"]);
        for bad in ["[]", "\"a\"", "[1]", "not json"] {
            let error = parse_argv(bad).unwrap_err();
            assert!(error.message.contains("MSGBENCH_PEER_COMMAND"), "{error}");
        }
    }

    #[test]
    fn a_server_that_exits_at_once_is_named() {
        let mut peer = Peer::start(&sh("exit 3"), "{}").unwrap_or_else(|error| panic!("{error}"));
        let error = peer.wait_listening(Duration::from_secs(10)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(error.message.contains("before it printed"), "{error}");
        assert!(error.message.contains("exit status: 3"), "{error}");
    }

    #[test]
    fn a_silent_server_times_out_and_is_stopped() {
        let started = Instant::now();
        let mut peer = Peer::start(&sh("cat >/dev/null"), "{}").unwrap();
        let error = peer.wait_listening(Duration::from_millis(200)).unwrap_err();
        assert!(error.message.contains("within 0.2 s"), "{error}");
        assert!(error.message.contains("listening"), "{error}");
        drop(peer); // closes its stdin: cat ends
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn lines_are_read_and_errors_relayed() {
        let script = r#"read request; echo noise; echo '{"type":"listening","port":4242}';
            echo '{"type":"error","kind":"resource","message":"out of luck"}'; cat >/dev/null"#;
        let mut peer = Peer::start(&sh(script), "{\"x\":1}").unwrap();
        assert_eq!(peer.wait_listening(Duration::from_secs(10)).unwrap(), 4242);
        let error = peer.wait_served(Duration::from_secs(10)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert_eq!(error.message, "the server: out of luck");
        assert_eq!(peer.host(), "127.0.0.1");
        drop(peer); // cat ends when stdin closes
    }

    #[test]
    fn served_counts_are_read_and_the_exit_checked() {
        let script = r#"read request; echo '{"type":"listening","port":1}';
            echo '{"type":"served","messages":3,"bytes":48}'"#;
        let mut peer = Peer::start(&sh(script), "{}").unwrap();
        peer.wait_listening(Duration::from_secs(10)).unwrap();
        let served = peer.wait_served(Duration::from_secs(10)).unwrap();
        assert_eq!(
            served,
            Served {
                messages: 3,
                bytes: 48
            }
        );
        peer.wait_exit(Duration::from_secs(10)).unwrap();
    }
}
