//! Echo in open loop (`rate` > 0): per socket a writer task sends message i when
//! the pacer (`pacer.rs`) says it is due, never waiting for echoes, and the
//! socket's own task reads the echoes in order, checks each as the closed loop
//! does, and records its latency from the message's intended send time, so that a
//! client or server that falls behind is charged for the wait it caused.

use super::client::{Buffers, Job, SocketRun, broken, count_echo, read_echo};
use super::pacer::Schedule;
use super::wire::IdleLimit;
use futures_util::future::try_join;
use msgbench_kit::histogram::LatencyLog;
use msgbench_kit::protocol::WorkerError;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// What the writer counted.
struct Written {
    messages: u64,
    bytes: u64,
}

/// Runs one socket's open loop from `schedule`'s start; returns its counts, the
/// time its last echo arrived and its latencies.
pub async fn echo(
    job: &Job,
    stream: TcpStream,
    buffers: &mut Buffers,
    schedule: Schedule,
    permits: Arc<Semaphore>,
) -> Result<(SocketRun, Instant, LatencyLog), WorkerError> {
    let (reader, writer) = stream.into_split();
    // A task of its own, so that on the multi-thread runtime the two directions
    // run in parallel; the JoinSet aborts it if the reader fails first
    // (`try_join` drops the other future at the first error).
    let mut writing = JoinSet::new();
    writing.spawn(write_paced(job.clone(), writer, permits));
    let written = async {
        match writing.join_next().await {
            Some(Ok(outcome)) => outcome,
            Some(Err(err)) => Err(WorkerError::internal(format!(
                "socket {}: the writer task failed: {err}",
                job.socket
            ))),
            None => Err(WorkerError::internal("the writer task vanished")),
        }
    };
    let ((written, writer), (mut run, end, latency)) =
        try_join(written, read_echoes(job, reader, buffers, schedule)).await?;
    // The connection closes here, once every echo is in: the server sees the end
    // of the stream and finishes.
    drop(writer);
    run.messages_sent = written.messages;
    run.bytes_sent = written.bytes;
    run.elapsed = end.duration_since(schedule.at(0));
    Ok((run, end, latency))
}

/// Sends each message as soon as its permit comes: at once when late, never
/// skipping one, one `write_all` per frame as the closed loop does. The write half
/// is handed back: dropping it would end the stream before the last echoes.
async fn write_paced(
    job: Job,
    mut writer: OwnedWriteHalf,
    permits: Arc<Semaphore>,
) -> Result<(Written, OwnedWriteHalf), WorkerError> {
    let size = job.frames.payload(0).len() as u64;
    let mut idle = IdleLimit::new(job.idle);
    let mut written = Written {
        messages: 0,
        bytes: 0,
    };
    for index in 0..job.messages {
        match permits.acquire().await {
            Ok(permit) => permit.forget(),
            // Closed: the run is over (it failed elsewhere).
            Err(_) => break,
        }
        idle.io(writer.write_all(job.frames.frame(index)))
            .await
            .map_err(|failure| broken(&job, index, "writing", &failure))?;
        written.messages += 1;
        written.bytes += size;
    }
    Ok((written, writer))
}

/// Reads every echo in order; each one's latency is the arrival of its last byte
/// minus its message's intended send time.
async fn read_echoes(
    job: &Job,
    reader: OwnedReadHalf,
    buffers: &mut Buffers,
    schedule: Schedule,
) -> Result<(SocketRun, Instant, LatencyLog), WorkerError> {
    let mut reader = BufReader::new(reader);
    // An echo may wait for its message's time: a slow rate is not a stall.
    let mut idle = IdleLimit::new(job.idle + schedule.interval());
    let mut run = SocketRun::default();
    let mut latency = LatencyLog::new();
    let mut end = schedule.at(0);
    for index in 0..job.messages {
        read_echo(job, index, &mut reader, &mut idle, &mut buffers.echoed).await?;
        end = Instant::now();
        latency.record(end.saturating_duration_since(schedule.at(index)).as_nanos() as u64);
        count_echo(job, index, &mut run, &buffers.echoed);
    }
    Ok((run, end, latency))
}

#[cfg(test)]
mod tests {
    use super::super::client::{self, ClientRun, Limits};
    use super::super::wire::Frames;
    use super::super::{SocketParams, tests::request};
    use crate::variant::Scheduler;
    use msgbench_kit::histogram::layout_index;
    use serde_json::json;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::thread;
    use std::time::Duration;

    /// 100 messages of 100 bytes on one socket at `rate`.
    fn params(rate: f64) -> SocketParams {
        let mut params = request("echo", 100, 10_000, 1);
        params.insert("rate".into(), json!(rate));
        SocketParams::from_json(&params).unwrap()
    }

    /// Runs the client against a server on a thread of this process that reads
    /// `batch` frames before it echoes them all, batch after batch (1: at once).
    fn run_against(params: &SocketParams, batch: usize) -> ClientRun {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let frame_bytes = 4 + params.size;
        let server = thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_nodelay(true).unwrap();
            let mut held = vec![0u8; batch * frame_bytes];
            // Until the client closes: a read of 0 bytes at a batch's start.
            while stream.read(&mut held[..1]).unwrap() == 1 {
                stream.read_exact(&mut held[1..]).unwrap();
                stream.write_all(&held).unwrap();
            }
        });
        let frames = Frames::new(params.size, params.messages_per_socket());
        let limits = Limits {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(10),
        };
        let scheduler = Scheduler::TokioMultiThread { worker_threads: 2 };
        let run = client::run(scheduler, "127.0.0.1", port, params, frames, limits).unwrap();
        server.join().unwrap();
        run
    }

    /// How many latencies lie below `nanos` (to the histogram's precision).
    fn below(run: &ClientRun, nanos: u64) -> u64 {
        let latency = run.latency.as_ref().unwrap();
        let bound = layout_index(nanos);
        latency
            .sparse()
            .iter()
            .filter(|(bucket, _)| *bucket < bound)
            .map(|(_, count)| count)
            .sum()
    }

    #[test]
    fn messages_leave_at_their_times_and_a_fast_server_keeps_latency_small() {
        // At 2,000/s the last of 100 messages is due 49.5 ms after the first,
        // whereas 100 round trips in closed loop take a few ms.
        let run = run_against(&params(2000.0), 1);
        let socket = run.sockets[0];
        assert_eq!((socket.messages_sent, socket.echoes_received), (100, 100));
        assert_eq!(socket.mismatches, 0);
        assert!(
            socket.elapsed >= Duration::from_micros(49_500),
            "not paced: done in {:?}",
            socket.elapsed
        );
        let latency = run.latency.as_ref().unwrap();
        assert_eq!(latency.count(), 100);
        // Generous (the machine may be loaded): most round trips within 10 ms.
        assert!(below(&run, 10_000_000) >= 50, "{:?}", latency.sparse());
    }

    #[test]
    fn a_server_that_falls_behind_is_charged_from_the_intended_times() {
        // The server echoes nothing until all 100 messages have arrived: the
        // writer must not wait for echoes (a closed loop would wait forever),
        // and message 0's latency runs from its intended time, so it is at least
        // the 99 ms (at 1,000/s) until message 99 was due.
        let run = run_against(&params(1000.0), 100);
        let latency = run.latency.as_ref().unwrap();
        assert_eq!(latency.count(), 100);
        assert_eq!(run.sockets[0].mismatches, 0);
        assert!(
            latency.max_nanos() >= 99_000_000,
            "largest latency {} ns",
            latency.max_nanos()
        );
        // Message 99 was echoed soon after it was sent: the latencies spread from
        // ~0 to 99 ms, half of them above 49 ms.
        assert!(below(&run, 49_000_000) <= 51, "{:?}", latency.sparse());
    }
}
