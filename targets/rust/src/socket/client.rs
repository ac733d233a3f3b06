//! The client half on tokio: `sockets` connections, one task per socket.
//!
//! The coordinator connects every socket first (TCP_NODELAY on for echo), spawns
//! one task per socket, waits until all of them are parked at the start (a
//! `Barrier`), takes t0 and releases them (a `watch`). Each task times its own
//! sequence from before its first write:
//! - echo: `write_all(frame)`, then `read_exact` the 4-byte header and the payload
//!   (passive reads through a tokio `BufReader`), compare, next message;
//! - flow: `write_all(frame)` for every message (no user-space write buffer: each
//!   frame goes to the kernel as one write), `shutdown(Write)`, then `read_exact`
//!   the server's 1-byte acknowledgement, which it sends once it has read the
//!   socket to its end: the socket's time runs to the moment the receiver had the
//!   last byte, plus the ack's trip back.
//!
//! - echo at `rate` > 0 (open loop, `openloop.rs`): a writer task per socket sends
//!   each message when the pacer (`pacer.rs`, started at t0) says it is due, and
//!   the socket's task reads and times the echoes.
//!
//! The wall time of the whole parallel sequence runs from t0 to the last socket's
//! end. The first socket to fail ends the run (the others are aborted) with an
//! error naming the socket and how far it got.

use super::Mode;
use super::SocketParams;
use super::openloop;
use super::pacer::{Pacer, Schedule};
use super::wire::{
    ACK, Failure, Frames, HEADER_BYTES, IdleLimit, announced_length, echo_matches, touched,
};
use crate::variant::{Scheduler, tokio_net_runtime};
use msgbench_kit::histogram::{LatencyHistogram, LatencyLog};
use msgbench_kit::protocol::WorkerError;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Barrier, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::timeout;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect: Duration,
    pub idle: Duration,
}

/// What one socket's task counted and timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketRun {
    /// Frames written in full.
    pub messages_sent: u64,
    pub bytes_sent: u64,
    /// Echo: echoes read back in full (flow: 0, the server counts).
    pub echoes_received: u64,
    pub bytes_received: u64,
    /// Echo: echoes whose payload differed from what was sent.
    pub mismatches: u64,
    /// From before the first write to the last echo (flow: to the ack).
    pub elapsed: Duration,
}

#[derive(Debug, Clone)]
pub struct ClientRun {
    pub sockets: Vec<SocketRun>,
    /// From the release of the tasks to the end of the last socket's sequence.
    pub wall: Duration,
    /// Open loop: every round trip from its intended send time, all sockets.
    pub latency: Option<LatencyHistogram>,
}

impl ClientRun {
    pub fn messages_sent(&self) -> u64 {
        self.sockets.iter().map(|socket| socket.messages_sent).sum()
    }
}

/// Runs the client on the variant's tokio runtime against `host:port`.
pub fn run(
    scheduler: Scheduler,
    host: &str,
    port: u16,
    params: &SocketParams,
    frames: Frames,
    limits: Limits,
) -> Result<ClientRun, WorkerError> {
    let runtime = tokio_net_runtime(scheduler)?;
    let outcome = runtime.block_on(coordinate(host, port, params, Arc::new(frames), limits));
    drop(runtime);
    outcome
}

/// One socket's job, as its task sees it.
#[derive(Clone)]
pub(super) struct Job {
    pub socket: usize,
    pub messages: u64,
    pub mode: Mode,
    pub check_content: bool,
    pub frames: Arc<Frames>,
    pub idle: Duration,
}

/// How a socket's task ended: its counts, when, and (open loop) its latencies.
type Finished = (SocketRun, Instant, Option<LatencyLog>);

async fn coordinate(
    host: &str,
    port: u16,
    params: &SocketParams,
    frames: Arc<Frames>,
    limits: Limits,
) -> Result<ClientRun, WorkerError> {
    let mut streams = Vec::with_capacity(params.sockets);
    for socket in 0..params.sockets {
        let stream = timeout(limits.connect, TcpStream::connect((host, port)))
            .await
            .map_err(|_| {
                WorkerError::internal(format!(
                    "socket {socket}: cannot connect to {host}:{port} within {} s",
                    limits.connect.as_secs_f64()
                ))
            })?
            .map_err(|err| {
                WorkerError::internal(format!(
                    "socket {socket}: cannot connect to {host}:{port}: {err}"
                ))
            })?;
        if params.mode == Mode::Echo {
            stream.set_nodelay(true).map_err(|err| {
                WorkerError::internal(format!("socket {socket}: cannot set TCP_NODELAY: {err}"))
            })?;
        }
        streams.push(stream);
    }

    // Open loop: the pacer's thread waits, parked, for the release.
    let mut pacer = if params.rate > 0.0 {
        Some(
            Pacer::new(params.rate, params.sockets, params.messages_per_socket()).map_err(
                |err| WorkerError::resource(format!("cannot start the pacer thread: {err}")),
            )?,
        )
    } else {
        None
    };
    let (rate, sockets) = (params.rate, params.sockets);
    let ready = Arc::new(Barrier::new(params.sockets + 1));
    let (start, started) = watch::channel(None::<Instant>);
    let mut tasks = JoinSet::new();
    for (socket, stream) in streams.into_iter().enumerate() {
        let job = Job {
            socket,
            messages: params.messages_per_socket(),
            mode: params.mode,
            check_content: params.check_content,
            frames: Arc::clone(&frames),
            idle: limits.idle,
        };
        let ready = Arc::clone(&ready);
        let mut started = started.clone();
        let permits: Option<Arc<Semaphore>> = pacer.as_ref().map(|pacer| pacer.permits(socket));
        tasks.spawn(async move {
            // Buffers are made before the start; only the sequence is timed.
            let mut buffers = Buffers::new(&job);
            ready.wait().await;
            let t0 = match started.wait_for(Option::is_some).await {
                // wait_for returns the value its predicate accepted: Some.
                Ok(t0) => t0.expect("the release carries t0"),
                Err(_) => return Err(WorkerError::internal("the client's coordinator went away")),
            };
            match (job.mode, permits) {
                (Mode::Echo, Some(permits)) => {
                    let schedule = Schedule::new(t0, rate, sockets);
                    let (run, end, latency) =
                        openloop::echo(&job, stream, &mut buffers, schedule, permits).await?;
                    Ok((run, end, Some(latency)))
                }
                (Mode::Echo, None) => finished(echo(&job, stream, &mut buffers).await),
                (Mode::Flow, _) => finished(flow(&job, stream).await),
            }
        });
    }
    ready.wait().await;
    let t0 = Instant::now();
    // The receivers live in the tasks; a send can only fail if they have all ended.
    let _ = start.send(Some(t0));
    if let Some(pacer) = pacer.as_mut() {
        pacer.release(t0);
    }

    let mut sockets = Vec::with_capacity(params.sockets);
    let mut latency = pacer.as_ref().map(|_| LatencyHistogram::new());
    let mut last_end = t0;
    while let Some(joined) = tasks.join_next().await {
        let outcome = joined.unwrap_or_else(|err| {
            Err(WorkerError::internal(format!(
                "a socket task failed: {err}"
            )))
        });
        match outcome {
            Ok((socket, end, log)) => {
                sockets.push(socket);
                last_end = last_end.max(end);
                if let (Some(latency), Some(log)) = (latency.as_mut(), log) {
                    latency.merge(&log);
                }
            }
            Err(error) => {
                tasks.abort_all();
                return Err(error);
            }
        }
    }
    Ok(ClientRun {
        sockets,
        wall: last_end.duration_since(t0),
        latency,
    })
}

/// A closed-loop socket's outcome, with no latencies.
fn finished(outcome: Result<(SocketRun, Instant), WorkerError>) -> Result<Finished, WorkerError> {
    outcome.map(|(run, end)| (run, end, None))
}

/// A socket task's buffers, allocated before the start.
pub(super) struct Buffers {
    /// Echo: where the echoed payload is read to.
    pub echoed: Vec<u8>,
}

impl Buffers {
    fn new(job: &Job) -> Self {
        let echoed = match job.mode {
            Mode::Echo => touched(job.frames.payload(0).len(), 0),
            Mode::Flow => Vec::new(),
        };
        Self { echoed }
    }
}

/// "the server closed socket k after i of n messages (what: why)".
pub(super) fn broken(job: &Job, done: u64, what: &str, failure: &Failure) -> WorkerError {
    let message = match failure {
        Failure::Stalled(_) => format!(
            "socket {} stalled after {done} of {} messages ({what}: {})",
            job.socket,
            job.messages,
            failure.describe()
        ),
        Failure::Io(_) => format!(
            "the server closed socket {} after {done} of {} messages ({what}: {})",
            job.socket,
            job.messages,
            failure.describe()
        ),
    };
    WorkerError::internal(message)
}

async fn echo(
    job: &Job,
    mut stream: TcpStream,
    buffers: &mut Buffers,
) -> Result<(SocketRun, Instant), WorkerError> {
    let (reader, mut writer) = stream.split();
    let mut reader = BufReader::new(reader);
    let size = buffers.echoed.len();
    let mut idle = IdleLimit::new(job.idle);
    let mut run = SocketRun::default();
    let started = Instant::now();
    for index in 0..job.messages {
        idle.io(writer.write_all(job.frames.frame(index)))
            .await
            .map_err(|failure| broken(job, index, "writing", &failure))?;
        run.messages_sent += 1;
        run.bytes_sent += size as u64;
        read_echo(job, index, &mut reader, &mut idle, &mut buffers.echoed).await?;
        count_echo(job, index, &mut run, &buffers.echoed);
    }
    let end = Instant::now();
    run.elapsed = end.duration_since(started);
    // The socket closes here: the server sees the end of the stream and finishes.
    Ok((run, end))
}

/// Reads the echo of message `index` whole: its header, which must announce the size
/// sent, then its payload into `echoed`.
pub(super) async fn read_echo<R: AsyncRead + Unpin>(
    job: &Job,
    index: u64,
    reader: &mut R,
    idle: &mut IdleLimit,
    echoed: &mut [u8],
) -> Result<(), WorkerError> {
    let size = echoed.len();
    let mut header = [0u8; HEADER_BYTES];
    idle.io(reader.read_exact(&mut header))
        .await
        .map_err(|failure| broken(job, index, "reading the echo", &failure))?;
    let length = announced_length(header);
    if length != size {
        return Err(WorkerError::internal(format!(
            "socket {}: echo {index} announced {length} bytes, {size} were sent",
            job.socket
        )));
    }
    idle.io(reader.read_exact(echoed))
        .await
        .map_err(|failure| broken(job, index, "reading the echo", &failure))?;
    Ok(())
}

/// Counts an echo read whole and compares it with what message `index` sent.
pub(super) fn count_echo(job: &Job, index: u64, run: &mut SocketRun, echoed: &[u8]) {
    run.echoes_received += 1;
    run.bytes_received += echoed.len() as u64;
    if !echo_matches(job.frames.payload(index), echoed, job.check_content) {
        run.mismatches += 1;
    }
}

async fn flow(job: &Job, mut stream: TcpStream) -> Result<(SocketRun, Instant), WorkerError> {
    let (reader, mut writer) = stream.split();
    let mut reader = BufReader::new(reader);
    let size = job.frames.payload(0).len() as u64;
    let mut idle = IdleLimit::new(job.idle);
    let mut run = SocketRun::default();
    let started = Instant::now();
    for index in 0..job.messages {
        idle.io(writer.write_all(job.frames.frame(index)))
            .await
            .map_err(|failure| broken(job, index, "writing", &failure))?;
        run.messages_sent += 1;
        run.bytes_sent += size;
    }
    idle.io(writer.shutdown())
        .await
        .map_err(|failure| broken(job, job.messages, "shutting down writes", &failure))?;
    let mut ack = [0u8; 1];
    idle.io(reader.read_exact(&mut ack))
        .await
        .map_err(|failure| broken(job, job.messages, "waiting for the ack", &failure))?;
    let end = Instant::now();
    if ack[0] != ACK {
        return Err(WorkerError::internal(format!(
            "socket {}: the server acknowledged with byte {:#04x}, not {ACK:#04x}",
            job.socket, ack[0]
        )));
    }
    run.elapsed = end.duration_since(started);
    Ok((run, end))
}
