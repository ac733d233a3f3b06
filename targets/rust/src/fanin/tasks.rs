//! fanin on tokio: sender tasks, one receiver task, one bounded mpsc channel.

use super::mix::SignalPlan;
use super::{FaninParams, FaninRun, Signal, sender_seeds};
use crate::variant::{Scheduler, tokio_runtime};
use msgbench_kit::measure::Stopwatch;
use msgbench_kit::protocol::WorkerError;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio::sync::mpsc::{self, Receiver, Sender, UnboundedSender};
use tokio::sync::{Barrier, watch};

/// How the receiver takes signals out of the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receive {
    /// `recv().await` per signal: the idiom.
    OneByOne,
    /// `recv_many`: every signal waiting (up to the channel's capacity) per wake-up;
    /// each is still received and counted one by one.
    Batched,
}

pub fn run(
    scheduler: Scheduler,
    receive: Receive,
    params: &FaninParams,
    capacity: usize,
) -> Result<FaninRun, WorkerError> {
    let runtime = tokio_runtime(scheduler, true)?;
    let params = params.clone();
    // The coordinator is a task like the others, scheduled by the same workers.
    let outcome =
        runtime.block_on(async move { tokio::spawn(coordinate(params, receive, capacity)).await });
    drop(runtime);
    outcome.map_err(|err| WorkerError::internal(format!("the fanin coordinator failed: {err}")))?
}

/// What every sender shares.
struct SenderShared {
    plan: SignalPlan,
    all_waiting: Barrier,
    stop: AtomicBool,
}

struct ReceiverReport {
    received_messages: u64,
    last_receive: Instant,
}

async fn coordinate(
    params: FaninParams,
    receive: Receive,
    capacity: usize,
) -> Result<FaninRun, WorkerError> {
    let senders = params.senders as usize;
    let (signals, inbox) = mpsc::channel(capacity);
    let receiver = tokio::spawn(receive_until_all_ended(
        inbox,
        params.senders,
        receive,
        capacity,
    ));

    let shared = Arc::new(SenderShared {
        plan: SignalPlan::new(&params.mix),
        // The senders plus this coordinator.
        all_waiting: Barrier::new(senders + 1),
        stop: AtomicBool::new(false),
    });
    let (release, released) = watch::channel(false);
    let (reports, mut report_inbox) = mpsc::unbounded_channel();
    let seed = sender_seeds();
    for index in 0..params.senders {
        tokio::spawn(send_until_stopped(
            Arc::clone(&shared),
            released.clone(),
            signals.clone(),
            reports.clone(),
            seed(index),
        ));
    }
    drop((signals, reports, released));

    shared.all_waiting.wait().await;
    let clock = Stopwatch::start();
    release.send_replace(true);
    tokio::time::sleep(params.duration).await;
    // Relaxed: the flag orders nothing else; senders only need to see it soon.
    shared.stop.store(true, Ordering::Relaxed);

    let mut sent_messages = 0;
    for _ in 0..senders {
        match report_inbox.recv().await {
            Some(sent) => sent_messages += sent,
            None => {
                return Err(WorkerError::internal(
                    "a fanin sender ended without reporting",
                ));
            }
        }
    }
    let senders_stopped = Instant::now();

    let receiver_report = receiver.await;
    let cpu = clock.stop().cpu;
    let start = clock.started_at();
    let (received_messages, receiver_alive, last_receive) = match receiver_report {
        Ok(Ok(report)) => (report.received_messages, true, report.last_receive),
        Ok(Err(error)) => return Err(error),
        Err(_) => (0, false, Instant::now()),
    };
    Ok(FaninRun {
        send_time: senders_stopped - start,
        receive_time: last_receive - start,
        cpu,
        sent_messages,
        received_messages,
        receiver_alive,
    })
}

async fn send_until_stopped(
    shared: Arc<SenderShared>,
    mut released: watch::Receiver<bool>,
    receiver: Sender<Signal>,
    report: UnboundedSender<u64>,
    seed: u64,
) {
    shared.all_waiting.wait().await;
    // is_ok() drops the watch's read guard before the sending starts.
    let go = released.wait_for(|released| *released).await.is_ok();
    let sent = if go {
        send_messages(&shared, &receiver, seed).await
    } else {
        0
    };
    // Report first, then the end marker, as the suite's workers do.
    let _ = report.send(sent);
    let _ = receiver.send(Signal::End).await;
}

/// The suite's do_work loop: pick, send a fresh copy, then check for the stop.
async fn send_messages(shared: &SenderShared, receiver: &Sender<Signal>, seed: u64) -> u64 {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut sent: u64 = 0;
    loop {
        let entry = shared.plan.pick(rng.random::<f64>());
        let signal = Signal::Message(shared.plan.payload_copy(entry));
        if receiver.send(signal).await.is_err() {
            return sent;
        }
        sent += 1;
        if shared.stop.load(Ordering::Relaxed) {
            return sent;
        }
    }
}

async fn receive_until_all_ended(
    mut inbox: Receiver<Signal>,
    senders: u64,
    receive: Receive,
    capacity: usize,
) -> Result<ReceiverReport, WorkerError> {
    let mut tally = ReceiverTally::default();
    match receive {
        Receive::OneByOne => {
            while tally.ended < senders {
                match inbox.recv().await {
                    Some(signal) => tally.count(signal),
                    None => return Err(tally.closed_early(senders)),
                }
            }
        }
        Receive::Batched => {
            let mut batch = Vec::with_capacity(capacity);
            while tally.ended < senders {
                if inbox.recv_many(&mut batch, capacity).await == 0 {
                    return Err(tally.closed_early(senders));
                }
                batch.drain(..).for_each(|signal| tally.count(signal));
            }
        }
    }
    Ok(ReceiverReport {
        received_messages: tally.received_messages,
        last_receive: Instant::now(),
    })
}

/// The receiver's counts.
#[derive(Default)]
struct ReceiverTally {
    received_messages: u64,
    ended: u64,
}

impl ReceiverTally {
    /// Counts one signal; a message's payload (the receiver's own copy) is freed here.
    fn count(&mut self, signal: Signal) {
        match signal {
            Signal::Message(_payload) => self.received_messages += 1,
            Signal::End => self.ended += 1,
        }
    }

    fn closed_early(&self, senders: u64) -> WorkerError {
        WorkerError::internal(format!(
            "the fanin channel closed after {} of {senders} end markers",
            self.ended
        ))
    }
}
