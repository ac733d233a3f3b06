//! fanin on std threads: one OS thread per sender, one receiver thread, one
//! bounded std::sync::mpsc::sync_channel. The calling thread coordinates.

use super::mix::SignalPlan;
use super::{FaninParams, FaninRun, Signal, sender_seeds};
use msgbench_kit::measure::Stopwatch;
use msgbench_kit::protocol::WorkerError;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Instant;

/// A sender only picks, copies and sends: a small stack keeps many threads cheap.
const SENDER_STACK_BYTES: usize = 64 * 1024;

/// Memory mappings a Rust thread takes: its stack and guard page, and the
/// alternate signal stack and its guard page that std sets up in every thread.
const MAPPINGS_PER_THREAD: u64 = 4;

/// Where Linux states the limit on memory mappings per process.
const MAX_MAP_COUNT_PATH: &str = "/proc/sys/vm/max_map_count";

pub fn run(params: &FaninParams, capacity: usize) -> Result<FaninRun, WorkerError> {
    check_thread_limit(params.senders)?;
    let (signals, inbox) = mpsc::sync_channel(capacity);
    let expected_ends = params.senders;
    let receiver = thread::Builder::new()
        .name("fanin-receiver".to_string())
        .spawn(move || receive_until_all_ended(inbox, expected_ends))
        .map_err(|err| WorkerError::resource(format!("cannot start the receiver thread: {err}")))?;

    let shared = Arc::new(SenderShared {
        plan: SignalPlan::new(&params.mix),
        gate: StartGate::default(),
        stop: AtomicBool::new(false),
    });
    let (reports, report_inbox) = mpsc::channel();
    let seed = sender_seeds();
    let mut started: u64 = 0;
    let mut spawn_error = None;
    for index in 0..params.senders {
        let (shared, signals, reports) = (Arc::clone(&shared), signals.clone(), reports.clone());
        let spawned = thread::Builder::new()
            .stack_size(SENDER_STACK_BYTES)
            .spawn(move || send_until_stopped(&shared, &signals, &reports, seed(index)));
        match spawned {
            Ok(_detached) => started += 1,
            Err(err) => {
                spawn_error = Some(err);
                break;
            }
        }
    }
    drop((signals, reports));

    if let Some(err) = spawn_error {
        // Let the senders already started end without sending, then give up.
        shared.gate.open(false);
        let _ = receiver.join();
        return Err(WorkerError::resource(format!(
            "cannot start sender thread {} of {}: {err}",
            started + 1,
            params.senders
        )));
    }

    shared.gate.wait_until_waiting(started);
    let clock = Stopwatch::start();
    shared.gate.open(true);
    thread::sleep(params.duration);
    // Relaxed: the flag orders nothing else; senders only need to see it soon.
    shared.stop.store(true, Ordering::Relaxed);

    let sent_messages = collect_reports(&report_inbox, started)?;
    let senders_stopped = Instant::now();

    let receiver_outcome = receiver.join();
    let cpu = clock.stop().cpu;
    let start = clock.started_at();
    let (received_messages, receiver_alive, last_receive) = match receiver_outcome {
        Ok(Ok((received, last_receive))) => (received, true, last_receive),
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

/// A thread that cannot map its signal stack aborts the whole process (std gives
/// no error to catch), so refuse up front a sender count that would pass the
/// per-process mapping limit. Other limits (pid_max, threads-max) make the spawn
/// itself fail, which is reported as a resource error below.
fn check_thread_limit(senders: u64) -> Result<(), WorkerError> {
    let Some(max_map_count) = fs::read_to_string(MAX_MAP_COUNT_PATH)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
    else {
        return Ok(());
    };
    // The receiver and the coordinating thread need their mappings too.
    let threads = senders + 2;
    let limit = max_map_count / MAPPINGS_PER_THREAD;
    if threads > limit {
        return Err(WorkerError::resource(format!(
            "senders = {senders} needs {threads} OS threads; vm.max_map_count = {max_map_count} allows about {limit} (raise it, or use a tokio variant)"
        )));
    }
    Ok(())
}

struct SenderShared {
    plan: SignalPlan,
    gate: StartGate,
    stop: AtomicBool,
}

/// Holds the senders until the coordinator opens it; unlike std's Barrier it can
/// also be opened to let them go without sending (when a spawn fails).
#[derive(Default)]
struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    waiting: u64,
    /// None while closed; Some(true) to send, Some(false) to give up.
    opened: Option<bool>,
}

impl StartGate {
    /// Called by a sender: counts itself in and waits; true means "send".
    fn arrive_and_wait(&self) -> bool {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        state.waiting += 1;
        self.changed.notify_all();
        loop {
            if let Some(go) = state.opened {
                return go;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
    }

    fn wait_until_waiting(&self, senders: u64) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        while state.waiting < senders {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
    }

    fn open(&self, go: bool) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        state.opened = Some(go);
        self.changed.notify_all();
    }
}

fn send_until_stopped(
    shared: &SenderShared,
    receiver: &SyncSender<Signal>,
    report: &Sender<u64>,
    seed: u64,
) {
    let sent = if shared.gate.arrive_and_wait() {
        send_messages(shared, receiver, seed)
    } else {
        0
    };
    // Report first, then the end marker, as the suite's workers do.
    let _ = report.send(sent);
    let _ = receiver.send(Signal::End);
}

/// The suite's do_work loop: pick, send a fresh copy, then check for the stop.
fn send_messages(shared: &SenderShared, receiver: &SyncSender<Signal>, seed: u64) -> u64 {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut sent: u64 = 0;
    loop {
        let entry = shared.plan.pick(rng.random::<f64>());
        let signal = Signal::Message(shared.plan.payload_copy(entry));
        if receiver.send(signal).is_err() {
            return sent;
        }
        sent += 1;
        if shared.stop.load(Ordering::Relaxed) {
            return sent;
        }
    }
}

fn collect_reports(reports: &Receiver<u64>, senders: u64) -> Result<u64, WorkerError> {
    let mut sent = 0;
    for _ in 0..senders {
        sent += reports
            .recv()
            .map_err(|_| WorkerError::internal("a fanin sender ended without reporting"))?;
    }
    Ok(sent)
}

fn receive_until_all_ended(
    inbox: Receiver<Signal>,
    senders: u64,
) -> Result<(u64, Instant), WorkerError> {
    let mut received_messages: u64 = 0;
    let mut ended: u64 = 0;
    while ended < senders {
        match inbox.recv() {
            Ok(Signal::Message(_payload)) => received_messages += 1,
            Ok(Signal::End) => ended += 1,
            // On a failed start fewer senders exist; the channel then closes early.
            Err(_) => {
                return Err(WorkerError::internal(format!(
                    "the fanin channel closed after {ended} of {senders} end markers"
                )));
            }
        }
    }
    Ok((received_messages, Instant::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgbench_kit::protocol::ErrorKind;

    #[test]
    fn refuses_more_threads_than_the_mapping_limit_allows() {
        let error = check_thread_limit(u64::MAX / 2).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Resource);
        assert!(error.message.contains("max_map_count"), "{}", error.message);
        assert!(check_thread_limit(4).is_ok());
    }
}
