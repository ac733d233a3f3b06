//! The chat server kind's server (`msgbench-rust --chat-server --listen HOST:PORT`,
//! docs/chat-server.md): a WebSocket chat server on tokio and tokio-tungstenite.
//!
//! As in Chut, a user is a task (its connection's, `connection.rs`) and a group is a
//! task (`group.rs`) holding its members' inboxes: a frame from a user goes to its
//! group, which picks a random other member, whose task keeps it in its history and
//! writes it to its connection. A connection opening with `{"stats": true}` is a
//! control connection answered from `stats.rs`.
//!
//! The runtime is the variant's: multi-thread by default (a worker per core),
//! current_thread when `MSGBENCH_TOKIO_RUNTIME=current_thread` (target.toml's
//! current_thread variant sets it; the server reads no request, so the variant's
//! environment is how it learns its runtime).

mod connection;
mod group;
mod stats;

use crate::stdin_watch;
use crate::variant::{Scheduler, cores, tokio_net_runtime};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket};

pub use connection::Server;

/// The environment variable naming the server's tokio runtime.
pub const RUNTIME_VAR: &str = "MSGBENCH_TOKIO_RUNTIME";

/// The accept queue asked of the kernel (capped by net.core.somaxconn): a load
/// generator opening thousands of connections at once should not see refusals.
const LISTEN_BACKLOG: u32 = 65_535;

/// What the command line and environment ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub listen: SocketAddr,
    pub scheduler: Scheduler,
}

impl Config {
    /// `args` after `--chat-server`; `runtime` the value of MSGBENCH_TOKIO_RUNTIME.
    pub fn parse(args: &[String], runtime: Option<&str>) -> Result<Self, String> {
        let mut listen = None;
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--listen" => {
                    let value = rest
                        .next()
                        .ok_or("--listen needs a value: HOST:PORT, e.g. 0.0.0.0:0")?;
                    listen = Some(value.parse::<SocketAddr>().map_err(|_| {
                        format!(
                            "--listen {value:?} is not HOST:PORT with an IP address, e.g. 0.0.0.0:0"
                        )
                    })?);
                }
                other => {
                    return Err(format!(
                        "unknown argument {other:?}: the chat server accepts --listen HOST:PORT"
                    ));
                }
            }
        }
        let listen = listen.ok_or("--listen HOST:PORT is required, e.g. --listen 0.0.0.0:0")?;
        let scheduler = match runtime.unwrap_or("multi_thread") {
            "multi_thread" | "" => Scheduler::TokioMultiThread {
                worker_threads: cores(),
            },
            "current_thread" => Scheduler::TokioCurrentThread,
            other => {
                return Err(format!(
                    "{RUNTIME_VAR}={other:?}: accepted values are multi_thread and current_thread"
                ));
            }
        };
        Ok(Self { listen, scheduler })
    }
}

/// `--chat-server ...`: serves until SIGTERM or the end of stdin, then exits 0.
/// Bad arguments: one line on stderr, exit status 2.
pub fn main(args: &[String]) -> ExitCode {
    let config = match Config::parse(args, std::env::var(RUNTIME_VAR).ok().as_deref()) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("msgbench-rust --chat-server: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio_net_runtime(config.scheduler) {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("msgbench-rust --chat-server: {}", err.message);
            return ExitCode::FAILURE;
        }
    };
    stdin_watch::exit_when_stdin_closes("msgbench-rust --chat-server", 0);
    match runtime.block_on(serve(config.listen)) {
        Ok(()) => {
            // Connection tasks may still be parked in reads: do not wait for them.
            runtime.shutdown_timeout(Duration::from_millis(100));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("msgbench-rust --chat-server: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Listens, prints `{"listening": PORT}`, accepts until SIGTERM.
async fn serve(listen: SocketAddr) -> Result<(), String> {
    let listener = bind(listen).map_err(|err| format!("cannot listen on {listen}: {err}"))?;
    let port = listener
        .local_addr()
        .map_err(|err| format!("cannot read the listening address: {err}"))?
        .port();
    println!("{}", serde_json::json!({ "listening": port }));
    io::stdout()
        .flush()
        .map_err(|err| format!("cannot write to stdout: {err}"))?;

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|err| format!("cannot handle SIGTERM: {err}"))?;
    let server = Arc::new(Server::new());
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let server = Arc::clone(&server);
                    tokio::spawn(async move { server.handle(stream).await });
                }
                Err(err) => {
                    // Out of fds (EMFILE) or a connection reset while queued: the
                    // listener stays usable; back off a little instead of spinning.
                    eprintln!("msgbench-rust --chat-server: accept: {err}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    };
    let stop = terminate.recv();
    futures_util::pin_mut!(accept, stop);
    futures_util::future::select(accept, stop).await;
    eprintln!("msgbench-rust --chat-server: SIGTERM, stopping");
    Ok(())
}

fn bind(listen: SocketAddr) -> io::Result<TcpListener> {
    let socket = if listen.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(listen)?;
    socket.listen(LISTEN_BACKLOG)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| word.to_string()).collect()
    }

    #[test]
    fn parses_listen_and_runtime() {
        let config = Config::parse(&args(&["--listen", "0.0.0.0:0"]), None).unwrap();
        assert_eq!(config.listen, "0.0.0.0:0".parse().unwrap());
        assert!(matches!(
            config.scheduler,
            Scheduler::TokioMultiThread { .. }
        ));
        let config =
            Config::parse(&args(&["--listen", "127.0.0.1:9"]), Some("current_thread")).unwrap();
        assert_eq!(config.scheduler, Scheduler::TokioCurrentThread);
    }

    #[test]
    fn bad_arguments_name_the_value_and_what_is_accepted() {
        let err = Config::parse(&args(&["--listen", "localhost"]), None).unwrap_err();
        assert!(
            err.contains("\"localhost\"") && err.contains("HOST:PORT"),
            "{err}"
        );
        let err = Config::parse(&args(&["--port", "1"]), None).unwrap_err();
        assert!(err.contains("--port") && err.contains("--listen"), "{err}");
        let err = Config::parse(&args(&[]), None).unwrap_err();
        assert!(err.contains("required"), "{err}");
        let err = Config::parse(&args(&["--listen", "0.0.0.0:0"]), Some("fast")).unwrap_err();
        assert!(
            err.contains("\"fast\"") && err.contains("current_thread"),
            "{err}"
        );
    }
}
